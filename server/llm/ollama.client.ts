/** Talks to the model server over Ollama's HTTP API with plain fetch. */

/** The upstream answered with an error (its own message), e.g. an unknown model. */
export class OllamaError extends Error {
  constructor(
    message: string,
    /** True when trying again cannot help (the upstream rejected the request itself). */
    readonly permanent = false,
  ) {
    super(message);
    this.name = "OllamaError";
  }
}

/** Nothing answered at OLLAMA_HOST. */
export class OllamaUnreachableError extends OllamaError {
  constructor(host: string) {
    super(`The model server at ${host} cannot be reached; check that Ollama is running there (OLLAMA_HOST)`);
    this.name = "OllamaUnreachableError";
  }
}

/** One line of /api/pull's NDJSON stream. */
export interface PullProgress {
  status: string;
  digest?: string;
  total?: number;
  completed?: number;
}

export interface GenerateTimings {
  total_duration: number;
  load_duration: number;
  prompt_eval_count: number;
  prompt_eval_duration: number;
  eval_count: number;
  eval_duration: number;
}

export interface ShowResult {
  family: string | null;
  parameterSize: string | null;
  quantization: string | null;
  capabilities: string[];
}

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** The closing line of a streamed /api/chat: how many tokens were written, in how many ns. */
export interface ChatTimings {
  eval_count: number;
  eval_duration: number;
}

export interface InstalledModel {
  name: string;
  size: number;
  digest: string;
}

/** Ollama's names: lower case, ":latest" when no tag is given ("llama3.2" and "llama3.2:latest" are one model). */
export function canonicalModelName(raw: string): string {
  const name = raw.trim().toLowerCase();
  const lastSegment = name.slice(name.lastIndexOf("/") + 1);
  return lastSegment.includes(":") ? name : `${name}:latest`;
}

export class OllamaClient {
  constructor(readonly host: string) {}

  /** Streams a pull; resolves on "success", rejects with the upstream's error otherwise. Ollama resumes partial layers by itself. */
  async pull(model: string, onProgress: (p: PullProgress) => void, signal?: AbortSignal): Promise<void> {
    const res = await this.request("/api/pull", { method: "POST", body: JSON.stringify({ model, stream: true }), signal });
    if (!res.ok || !res.body) throw await this.errorOf(res);
    const decoder = new TextDecoder();
    let buffered = "";
    let succeeded = false;
    const handle = (line: string) => {
      if (!line.trim()) return;
      let message: PullProgress & { error?: string };
      try {
        message = JSON.parse(line) as PullProgress & { error?: string };
      } catch {
        throw new OllamaError("The model server sent a malformed progress line");
      }
      if (typeof message.error === "string") throw new OllamaError(message.error, /manifest|does not exist|not found|invalid model name/i.test(message.error));
      if (message.status === "success") succeeded = true;
      else onProgress(message);
    };
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        for (let newline = buffered.indexOf("\n"); newline >= 0; newline = buffered.indexOf("\n")) {
          handle(buffered.slice(0, newline));
          buffered = buffered.slice(newline + 1);
        }
      }
      handle(buffered + decoder.decode());
    } catch (error) {
      if (error instanceof OllamaError || signal?.aborted) throw error;
      throw new OllamaError(`The download from the model server was interrupted (${(error as Error).message})`);
    }
    if (!succeeded) throw new OllamaError("The download from the model server ended before it was complete");
  }

  async generate(model: string, prompt: string, options: Record<string, unknown>): Promise<GenerateTimings> {
    const res = await this.request("/api/generate", { method: "POST", body: JSON.stringify({ model, prompt, stream: false, options }) });
    if (!res.ok) throw await this.errorOf(res);
    const body = (await res.json()) as Partial<GenerateTimings>;
    const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
    return {
      total_duration: num(body.total_duration),
      load_duration: num(body.load_duration),
      prompt_eval_count: num(body.prompt_eval_count),
      prompt_eval_duration: num(body.prompt_eval_duration),
      eval_count: num(body.eval_count),
      eval_duration: num(body.eval_duration),
    };
  }

  async show(model: string): Promise<ShowResult> {
    const res = await this.request("/api/show", { method: "POST", body: JSON.stringify({ model }) });
    if (!res.ok) throw await this.errorOf(res);
    const body = (await res.json()) as { details?: Record<string, unknown>; capabilities?: unknown };
    const str = (v: unknown) => (typeof v === "string" && v ? v : null);
    return {
      family: str(body.details?.family),
      parameterSize: str(body.details?.parameter_size),
      quantization: str(body.details?.quantization_level),
      capabilities: Array.isArray(body.capabilities) ? body.capabilities.filter((c): c is string => typeof c === "string") : [],
    };
  }

  /**
   * Streams a chat answer (/api/chat, NDJSON): onDelta gets each piece of the message as it
   * comes; resolves with the closing line's timings. A stream that ends without `done` (the
   * model server stopped mid-answer) or with an `error` line rejects with an OllamaError.
   */
  async chat(model: string, messages: ChatMessage[], options: Record<string, unknown>, onDelta: (text: string) => void, signal?: AbortSignal): Promise<ChatTimings> {
    const res = await this.request("/api/chat", { method: "POST", body: JSON.stringify({ model, messages, stream: true, options }), signal });
    if (!res.ok || !res.body) throw await this.errorOf(res);
    let timings: ChatTimings | null = null;
    const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
    try {
      for await (const line of ndjsonLines(res.body as unknown as AsyncIterable<Uint8Array>)) {
        let message: { message?: { content?: unknown }; done?: unknown; error?: unknown; eval_count?: unknown; eval_duration?: unknown };
        try {
          message = JSON.parse(line) as typeof message;
        } catch {
          throw new OllamaError("The model server sent a malformed answer line");
        }
        if (typeof message.error === "string") throw new OllamaError(message.error);
        if (typeof message.message?.content === "string" && message.message.content) onDelta(message.message.content);
        if (message.done === true) timings = { eval_count: num(message.eval_count), eval_duration: num(message.eval_duration) };
      }
    } catch (error) {
      if (error instanceof OllamaError || signal?.aborted) throw error;
      throw new OllamaError(`The model server stopped in the middle of the answer (${(error as Error).message})`);
    }
    if (!timings) throw new OllamaError("The model server stopped in the middle of the answer");
    return timings;
  }

  /**
   * The context length (tokens) the model runs with: its Modelfile's `num_ctx` when set, else
   * the architecture's `<arch>.context_length` from /api/show; null when neither is given.
   */
  async contextLength(model: string): Promise<number | null> {
    const res = await this.request("/api/show", { method: "POST", body: JSON.stringify({ model }) });
    if (!res.ok) throw await this.errorOf(res);
    const body = (await res.json()) as { parameters?: unknown; model_info?: Record<string, unknown> };
    const numCtx = typeof body.parameters === "string" ? /^\s*num_ctx\s+(\d+)/m.exec(body.parameters) : null;
    if (numCtx) return Number(numCtx[1]);
    const info = body.model_info ?? {};
    const arch = info["general.architecture"];
    const length = typeof arch === "string" ? info[`${arch}.context_length`] : Object.entries(info).find(([key]) => key.endsWith(".context_length"))?.[1];
    return typeof length === "number" && length > 0 ? length : null;
  }

  /**
   * Ollama's /api/embed: one vector per input, in order. Errors keep the upstream's message
   * (an unknown model is a permanent 404; a model that cannot embed a permanent 400).
   */
  async embed(model: string, inputs: string[], signal?: AbortSignal): Promise<number[][]> {
    if (inputs.length === 0) return [];
    const res = await this.request("/api/embed", { method: "POST", body: JSON.stringify({ model, input: inputs, truncate: true }), signal });
    if (!res.ok) throw await this.errorOf(res);
    const body = (await res.json()) as { embeddings?: unknown };
    const vectors = body.embeddings;
    const valid = Array.isArray(vectors) && vectors.length === inputs.length
      && vectors.every((v) => Array.isArray(v) && v.length > 0 && v.length === (vectors[0] as unknown[]).length && v.every((x) => typeof x === "number" && Number.isFinite(x)));
    if (!valid) throw new OllamaError("The model server sent malformed embeddings");
    return vectors as number[][];
  }

  /** The installed model of that name (size and digest come from /api/tags), or null. */
  async installed(model: string): Promise<InstalledModel | null> {
    const res = await this.request("/api/tags", { method: "GET" });
    if (!res.ok) throw await this.errorOf(res);
    const body = (await res.json()) as { models?: Array<{ name?: string; model?: string; size?: number; digest?: string }> };
    const wanted = canonicalModelName(model);
    const found = (body.models ?? []).find((m) => canonicalModelName(m.name ?? m.model ?? "") === wanted);
    return found ? { name: found.name ?? wanted, size: found.size ?? 0, digest: found.digest ?? "" } : null;
  }

  /** The model server's version (GET /api/version), or null when nothing usable answers within timeoutMs. */
  async version(timeoutMs: number): Promise<string | null> {
    try {
      const res = await fetch(`${this.host}/api/version`, { signal: AbortSignal.timeout(timeoutMs) });
      if (!res.ok) return null;
      const body = (await res.json()) as { version?: unknown };
      return typeof body.version === "string" ? body.version : "";
    } catch {
      return null;
    }
  }

  /** Removes the model from the model server; a model it does not have counts as removed. */
  async delete(model: string): Promise<void> {
    const res = await this.request("/api/delete", { method: "DELETE", body: JSON.stringify({ model }) });
    if (res.ok || res.status === 404) return;
    throw await this.errorOf(res);
  }

  private async request(path: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(this.host + path, { ...init, headers: { "content-type": "application/json" } });
    } catch (error) {
      if (init.signal?.aborted) throw error;
      throw new OllamaUnreachableError(this.host);
    }
  }

  private async errorOf(res: Response): Promise<OllamaError> {
    let message = `The model server answered HTTP ${res.status}`;
    try {
      const body = (await res.json()) as { error?: unknown };
      if (typeof body.error === "string" && body.error) message = body.error;
    } catch {
      // Not JSON: keep the status sentence.
    }
    return new OllamaError(message, res.status >= 400 && res.status < 500);
  }
}

/** The lines of an NDJSON body, as they arrive (the last one even without a newline). */
async function* ndjsonLines(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let newline = buffered.indexOf("\n"); newline >= 0; newline = buffered.indexOf("\n")) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (line.trim()) yield line;
    }
  }
  buffered += decoder.decode();
  if (buffered.trim()) yield buffered;
}
