import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkModelRegistry, registryHostOf } from "../../server/llm/model-registry";

describe("model names with a registry host (OLLAMA_REGISTRIES)", () => {
  it("reads the host as Ollama does: only before namespace/model", () => {
    assert.equal(registryHostOf("llama3.2"), null);
    assert.equal(registryHostOf("qwen2.5:7b"), null);
    assert.equal(registryHostOf("library/llama3.2:latest"), null);
    assert.equal(registryHostOf("example.com/model"), null, "two parts are namespace/model");
    assert.equal(registryHostOf("registry.ollama.ai/library/llama3.2"), "registry.ollama.ai");
    assert.equal(registryHostOf("169.254.169.254:80/ns/model"), "169.254.169.254:80");
    assert.equal(registryHostOf("Evil.Example:5000/ns/model:tag"), "evil.example:5000");
    assert.equal(registryHostOf("a/b/ns/model"), "a/b");
  });

  it("refuses a host outside the list with a detail naming the setting; allows listed hosts and names without one", () => {
    const registries = ["registry.ollama.ai", "models.corp.example:5000"];
    checkModelRegistry("llama3.2", registries);
    checkModelRegistry("ns/model", registries);
    checkModelRegistry("registry.ollama.ai/library/llama3.2", registries);
    checkModelRegistry("Models.Corp.Example:5000/team/model:1b", registries);
    for (const name of ["127.0.0.1:11434/ns/model", "169.254.169.254/latest/meta-data", "models.corp.example/team/model", "a/b/ns/model"]) {
      assert.throws(
        () => checkModelRegistry(name, registries),
        (error: Error & { status?: number }) => error.status === 400 && /not one this instance pulls from \(OLLAMA_REGISTRIES\)/.test(error.message),
        name,
      );
    }
  });
});
