import { BadRequestError } from "../errors";

/**
 * The registry host a model name names, as Ollama reads a name (`[host[:port]/][namespace/]model[:tag]`,
 * parsed from the right): the part before `namespace/model` when there is one, in lower case;
 * null for `model` and `namespace/model`, which come from Ollama's own registry.
 */
export function registryHostOf(modelName: string): string | null {
  const parts = modelName.trim().toLowerCase().split("/");
  return parts.length >= 3 ? parts.slice(0, -2).join("/") : null;
}

/**
 * Refuses a model name whose registry host is not in OLLAMA_REGISTRIES: the model server fetches
 * from the host a name carries, so without this rule anyone who may pull could make it dial any
 * address and port (issue 34: SSRF).
 */
export function checkModelRegistry(modelName: string, registries: readonly string[]): void {
  const host = registryHostOf(modelName);
  if (host === null || registries.includes(host)) return;
  throw new BadRequestError(
    `The model name ${modelName.trim()} names the registry ${host}, which is not one this instance pulls from (OLLAMA_REGISTRIES); ask the administrator, or use a name without a registry host`,
  );
}
