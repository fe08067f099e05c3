import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, describe, it } from "node:test";
import { startFakeOllama, type FakeOllama } from "../fixtures/fake-ollama";
import { signUp } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";
import { postSse, type SseResult } from "../fixtures/sse-client";
import { waitFor } from "../fixtures/wait-for";

let fake: FakeOllama;
let token: string;

const sluice = useSluice({
  env: async () => {
    fake = await startFakeOllama();
    return { OLLAMA_HOST: fake.url, SLUICE_PULL_RETRY_DELAY_MS: "10", SLUICE_SSE_KEEPALIVE_MS: "50" };
  },
  setUp: async ({ request }) => {
    token = (await signUp(request, "models")).token;
  },
});
const { request } = sluice;
after(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.failNextPulls = 0;
  fake.failAlways = false;
  fake.failMode = "error";
  fake.lineDelayMs = 0;
});

// `update: true` unless a test says otherwise: most tests pull models the catalog may hold already and want a real download.
const pull = (modelName: string, opts: Parameters<typeof postSse>[3] = {}, as = token, body: Record<string, unknown> = { update: true }) =>
  postSse(`${sluice.server.api}/models`, as, { model_name: modelName, ...body }, opts);
const removeFromCatalog = async (modelName: string) => {
  const model = (await request("GET", "/models", { token })).body.find((m: { model_name: string }) => m.model_name === modelName);
  if (model) assert.equal((await request("DELETE", `/models/${model.id}`, { token })).status, 204);
};
const cancel = (modelName: string, as = token) => request("POST", "/models/cancel", { token: as, body: { model_name: modelName } });
const inCatalog = async (modelName: string) => (await request("GET", "/models", { token })).body.some((m: { model_name: string }) => m.model_name === modelName);
const statuses = (r: SseResult) => r.events.map((e) => e.status as string);
const last = (r: SseResult) => r.events[r.events.length - 1];
describe("GET /models/library/search", () => {
  it("finds models despite typos and answers the decided fields", async () => {
    const res = await request("GET", "/models/library/search?q=mistrl&top_k=3", { token });
    assert.equal(res.status, 200);
    assert.equal(res.body.length, 3);
    assert.equal(res.body[0].name, "mistral");
    assert.deepEqual(Object.keys(res.body[0]), ["name", "description", "capabilities", "sizes", "pulls", "updated_at"]);
    assert.ok(res.body[0].sizes.includes("7b"));
    assert.ok(Number.isInteger(res.body[0].pulls));
    const coder = await request("GET", "/models/library/search?q=qwen%20coder", { token });
    assert.equal(coder.body[0].name, "qwen2.5-coder");
  });

  it("needs a session, and validates top_k", async () => {
    assert.equal((await request("GET", "/models/library/search?q=llama")).status, 401);
    assert.equal((await request("GET", "/models/library/search?q=llama&top_k=0", { token })).status, 422);
    assert.equal((await request("GET", "/models/library/search?q=llama&top_k=abc", { token })).status, 422);
  });

  it("answers 503 for a refresh when no MODEL_LIBRARY_URL is configured", async () => {
    const res = await request("POST", "/models/library/refresh", { token });
    assert.equal(res.status, 503);
    assert.match(res.body.detail, /MODEL_LIBRARY_URL/);
  });
});

describe("POST /models", () => {
  it("streams layer progress, then benchmarking, then completed with the catalog record", async () => {
    const before = fake.pullCount("tinyllama");
    const res = await pull("tinyllama");
    assert.equal(res.status, 200);
    assert.match(res.contentType ?? "", /^text\/event-stream/);
    const layers = res.events.filter((e) => e.status.startsWith("pulling "));
    assert.ok(layers.length >= 5);
    let overall = 0;
    for (const e of layers) {
      assert.match(e.status, /^pulling [0-9a-f]{12}$/);
      assert.match(e.digest, /^sha256:[0-9a-f]{64}$/);
      assert.ok(Number.isInteger(e.completed) && Number.isInteger(e.total) && e.completed <= e.total);
      // The whole download: never goes back, never past what is known of the total.
      assert.ok(Number.isInteger(e.completed_bytes) && Number.isInteger(e.total_bytes), JSON.stringify(e));
      assert.ok(e.completed_bytes >= overall && e.completed_bytes <= e.total_bytes && e.total_bytes >= e.total, JSON.stringify(e));
      overall = e.completed_bytes;
    }
    const lastLayer = layers[layers.length - 1];
    assert.equal(lastLayer.completed_bytes, 637_000_000 + 98 + 110);
    assert.equal(lastLayer.total_bytes, lastLayer.completed_bytes);
    assert.deepEqual(statuses(res).slice(layers.length), ["benchmarking", "completed"]);
    assert.equal(typeof res.events[layers.length].message, "string");
    const model = last(res).model;
    assert.equal(model.model_name, "tinyllama:latest");
    // eval_count 128 over eval_duration 2 s; load (0.8 s) and prompt evaluation excluded.
    assert.equal(model.tokens_per_second, 64);
    assert.equal(model.total_tokens_processed, 26 + 128);
    assert.equal(model.time_to_first_token_ms, 145.6);
    assert.equal(model.family, "llama");
    assert.equal(model.parameter_size, "1B");
    assert.equal(model.quantization, "Q4_0");
    assert.ok(model.size_bytes > 637_000_000);
    assert.match(model.digest, /^[0-9a-f]{64}$/);
    assert.match(model.pulled_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
    assert.match(model.benchmarked_at, /^\d{4}-\d\d-\d\dT/);
    // What /api/show says the model can do, kept so the Ask view offers only models that write text.
    assert.deepEqual(model.capabilities, ["completion"]);
    assert.equal(fake.pullCount("tinyllama"), before + 1);

    const list = await request("GET", "/models", { token });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.find((m: { id: string }) => m.id === model.id), model);
  });

  it("says a model is already in the catalog instead of downloading it again; update: true pulls it again", async () => {
    const first = last(await pull("smollm2:135m")).model;
    const before = fake.pullCount("smollm2:135m");
    const again = await pull("SmolLM2:135m", {}, token, {});
    assert.equal(again.status, 200);
    assert.match(again.contentType ?? "", /^text\/event-stream/);
    // The stream still ends with `completed` and the record, as the contract says; it only adds already_present.
    assert.deepEqual(statuses(again), ["completed"]);
    assert.equal(last(again).already_present, true);
    assert.deepEqual(last(again).model, first);
    assert.equal(fake.pullCount("smollm2:135m"), before, "nothing was downloaded");

    const updated = await pull("smollm2:135m", {}, token, { update: true });
    assert.equal(last(updated).status, "completed");
    assert.equal(last(updated).already_present, undefined);
    assert.ok(statuses(updated).some((s) => s.startsWith("pulling ")));
    assert.equal(fake.pullCount("smollm2:135m"), before + 1);
    assert.equal(last(updated).model.id, first.id, "one catalog record per model");
    const list = await request("GET", "/models", { token });
    assert.equal(list.body.filter((m: { model_name: string }) => m.model_name === "smollm2:135m").length, 1);

    // Removed from the model server behind Sluice's back: the catalog alone does not count as present.
    fake.uninstall("smollm2:135m");
    const restored = await pull("smollm2:135m", {}, token, {});
    assert.equal(last(restored).status, "completed");
    assert.equal(last(restored).already_present, undefined);
    assert.equal(fake.pullCount("smollm2:135m"), before + 2);
    assert.equal((await request("POST", "/models", { token, body: { model_name: "smollm2:135m", update: "yes" } })).status, 422);
  });

  for (const mode of ["error", "reset"] as const) {
    it(`retries a download that fails mid-stream (${mode}) twice, resuming, then completes`, async () => {
      fake.failMode = mode;
      fake.failNextPulls = 2;
      const before = fake.pullCount("qwen2.5-coder:7b");
      const res = await pull("qwen2.5-coder:7b");
      assert.equal(last(res).status, "completed", JSON.stringify(res.events.slice(-3)));
      assert.equal(fake.pullCount("qwen2.5-coder:7b") - before, 3);
      assert.deepEqual(res.events.filter((e) => e.status === "retrying").map((e) => e.attempt), [2, 3]);
      // Each new attempt picked the big layer up where the last one stopped.
      const [a, b, c] = fake.resumedFrom("qwen2.5-coder:7b").slice(-3);
      assert.ok(a < b && b < c && b > 0, `${a} ${b} ${c}`);
    });
  }

  it("gives up after two retries with an error event carrying the upstream's message", async () => {
    fake.failAlways = true;
    const before = fake.pullCount("tinyllama");
    const res = await pull("tinyllama");
    assert.equal(fake.pullCount("tinyllama") - before, 3);
    assert.deepEqual(last(res), { status: "error", error: "max retries exceeded: unexpected EOF" });
    assert.ok(!statuses(res).includes("completed"));
    assert.ok(res.raw.includes('data: {"status":"error","error":"max retries exceeded: unexpected EOF"}\n\n'));
  });

  it("answers an unknown model with the upstream's message, without retrying", async () => {
    const res = await pull("no-such-model-xyz");
    assert.deepEqual(res.events, [{ status: "error", error: "pull model manifest: file does not exist" }]);
    assert.equal(fake.pullCount("no-such-model-xyz"), 1);
  });

  it("shares one upstream pull between concurrent callers; the late one joins at the current point", async () => {
    fake.lineDelayMs = 25;
    const before = fake.pullCount("qwen2.5-coder:7b");
    // Signed up first: a sign-up (bcrypt) can outlast the whole pull on a busy machine.
    const other = (await signUp(request, "models-b")).token;
    let firstLayer!: () => void;
    const started = new Promise<void>((resolve) => (firstLayer = resolve));
    const a = pull("qwen2.5-coder:7b", { onEvent: (e) => e.completed > 0 && firstLayer() });
    await started;
    const b = pull("QWEN2.5-Coder:7b", {}, other);
    const [ra, rb] = await Promise.all([a, b]);
    assert.equal(last(ra).status, "completed");
    assert.equal(last(rb).status, "completed");
    assert.equal(last(ra).model.id, last(rb).model.id);
    assert.equal(fake.pullCount("qwen2.5-coder:7b") - before, 1);
    assert.ok(rb.events[0].status.startsWith("pulling ") && rb.events[0].completed > 0, JSON.stringify(rb.events[0]));
    assert.ok(rb.events.length < ra.events.length);
  });

  it("keeps pulling for the others when a client disconnects, and finishes even with nobody left", async () => {
    fake.lineDelayMs = 25;
    const before = fake.pullCount("smollm2:135m");
    const leaver = new AbortController();
    const a = pull("smollm2:135m", { signal: leaver.signal, onEvent: () => leaver.abort() });
    // The second client comes once the first has left, however long that took: the pull is still under way upstream.
    await a;
    const b = pull("smollm2:135m");
    const [ra, rb] = await Promise.all([a, b]);
    assert.ok(ra.events.length >= 1 && !statuses(ra).includes("completed"));
    assert.equal(last(rb).status, "completed");
    assert.equal(fake.pullCount("smollm2:135m") - before, 1);

    // Alone: leave at once; the pull still completes and registers the model.
    await request("DELETE", `/models/${last(rb).model.id}`, { token });
    const alone = new AbortController();
    await pull("smollm2:135m", { signal: alone.signal, onEvent: () => alone.abort() });
    await waitFor(async () => (await request("GET", "/models", { token })).body.some((m: { model_name: string }) => m.model_name === "smollm2:135m"), "smollm2:135m in GET /models");
    assert.equal(fake.pullCount("smollm2:135m") - before, 2);
  });

  it("sends keep-alive comments while the upstream is quiet", async () => {
    fake.lineDelayMs = 120;
    const res = await pull("nomic-embed-text");
    assert.ok(res.raw.includes(": keep-alive\n\n"));
    // An embedding model cannot generate: it is registered without speed figures.
    const model = last(res).model;
    assert.equal(model.tokens_per_second, 0);
    assert.equal(model.benchmarked_at, null);
    assert.equal(model.family, "nomic-bert");
    assert.deepEqual(model.capabilities, ["embedding"]);
  });

  it("cancel by the only one waiting: the stream ends with `cancelled`, the download stops, and a later pull resumes it", async () => {
    await removeFromCatalog("qwen2.5-coder:7b");
    fake.lineDelayMs = 25;
    const before = fake.pullCount("qwen2.5-coder:7b");
    const abortedBefore = fake.abortedPulls("qwen2.5-coder:7b");
    let answer: Promise<Awaited<ReturnType<typeof cancel>>> | undefined;
    const res = await pull("qwen2.5-coder:7b", {
      onEvent: (e) => {
        if (e.completed > 0) answer ??= cancel("qwen2.5-coder:7b");
      },
    });
    const answered = await answer!;
    assert.equal(answered.status, 200, answered.text);
    assert.deepEqual(answered.body, { model_name: "qwen2.5-coder:7b", download_stopped: true });
    assert.equal(last(res).status, "cancelled");
    assert.equal(last(res).download_stopped, true);
    assert.match(last(res).message, /cancelled/);
    assert.ok(!statuses(res).includes("completed") && !statuses(res).includes("benchmarking"));
    await waitFor(async () => fake.abortedPulls("qwen2.5-coder:7b") === abortedBefore + 1, "the fake Ollama to see the pull aborted");
    assert.equal(fake.pullCount("qwen2.5-coder:7b"), before + 1);
    assert.ok(!(await inCatalog("qwen2.5-coder:7b")));
    // Nothing left to cancel.
    const twice = await cancel("qwen2.5-coder:7b");
    assert.equal(twice.status, 404);
    assert.match(twice.body.detail, /no pull of qwen2\.5-coder:7b under way/);

    fake.lineDelayMs = 0;
    const resumed = await pull("qwen2.5-coder:7b");
    assert.equal(last(resumed).status, "completed");
    assert.ok(fake.resumedFrom("qwen2.5-coder:7b").slice(-1)[0] > 0, "the next pull picked the layer up where it stopped");
  });

  it("cancel by one of two users: only the canceller leaves; the download goes on for the other", async () => {
    fake.lineDelayMs = 25;
    const model = "nomic-embed-text:latest";
    const before = fake.pullCount(model);
    const abortedBefore = fake.abortedPulls(model);
    const other = (await signUp(request, "stays")).token;
    let joined!: () => void;
    const started = new Promise<void>((resolve) => (joined = resolve));
    const mine = pull(model, { onEvent: (e) => e.completed > 0 && joined() });
    await started;
    let cancelled: Promise<Awaited<ReturnType<typeof cancel>>> | undefined;
    const theirs = pull(model, {
        onEvent: () => {
          cancelled ??= cancel(model, other);
        },
      }, other);
    const [rm, rt] = await Promise.all([mine, theirs]);
    const answered = await cancelled!;
    assert.deepEqual(answered.body, { model_name: model, download_stopped: false });
    assert.equal(last(rt).status, "cancelled");
    assert.equal(last(rt).download_stopped, false);
    assert.match(last(rt).message, /goes on for others/);
    assert.equal(last(rm).status, "completed", JSON.stringify(rm.events.slice(-2)));
    assert.equal(fake.pullCount(model), before + 1);
    assert.equal(fake.abortedPulls(model), abortedBefore);
    // The one who cancelled has nothing to cancel any more; a user who never asked never had.
    assert.equal((await cancel(model, other)).status, 404);
  });

  it("someone who asked and then closed the page still counts: another user's cancel does not stop the download", async () => {
    await removeFromCatalog("tinyllama:latest");
    const other = (await signUp(request, "canceller")).token;
    // Slow enough that the pull is still under way when the second user comes.
    fake.lineDelayMs = 60;
    const before = fake.pullCount("tinyllama");
    const abortedBefore = fake.abortedPulls("tinyllama");
    const leaver = new AbortController();
    await pull("tinyllama", { signal: leaver.signal, onEvent: () => leaver.abort() });
    let cancelled: Promise<Awaited<ReturnType<typeof cancel>>> | undefined;
    const res = await pull("tinyllama", {
        onEvent: () => {
          cancelled ??= cancel("tinyllama", other);
        },
      }, other);
    assert.equal((await cancelled!).body.download_stopped, false);
    assert.equal(last(res).status, "cancelled");
    await waitFor(() => inCatalog("tinyllama:latest"), "tinyllama:latest in the catalog");
    assert.equal(fake.pullCount("tinyllama"), before + 1, "the second user joined the same download");
    assert.equal(fake.abortedPulls("tinyllama"), abortedBefore);
  });

  it("answers 404 to a cancel without a pull under way, and validates the body", async () => {
    const none = await cancel("tinyllama");
    assert.equal(none.status, 404);
    assert.equal((await request("POST", "/models/cancel", { token, body: {} })).status, 422);
    assert.equal((await request("POST", "/models/cancel", { body: { model_name: "tinyllama" } })).status, 401);
  });

  it("GET /models/server says the model server answers, with its version", async () => {
    const res = await request("GET", "/models/server", { token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { reachable: true, version: "0.12.6", on_this_machine: true });
    assert.equal((await request("GET", "/models/server")).status, 401);
  });

  it("validates the body before opening a stream", async () => {
    const res = await request("POST", "/models", { token, body: {} });
    assert.equal(res.status, 422);
    assert.equal(res.body.errors[0].field, "model_name");
    assert.equal((await request("POST", "/models", { body: { model_name: "tinyllama" } })).status, 401);
  });

  it("refuses a model name whose registry host is not in OLLAMA_REGISTRIES (400, nothing asked of the model server)", async () => {
    const before = fake.pullCount();
    for (const name of ["127.0.0.1:22/ns/model", "169.254.169.254/latest/meta-data"]) {
      const res = await request("POST", "/models", { token, body: { model_name: name } });
      assert.equal(res.status, 400, res.text);
      assert.match(res.body.detail, /names the registry .+, which is not one this instance pulls from \(OLLAMA_REGISTRIES\)/);
    }
    assert.equal(fake.pullCount(), before, "no pull reached the model server");
  });
});

describe("personal model lists", () => {
  let modelId: string;
  before(async () => {
    modelId = last(await pull("tinyllama")).model.id;
  });

  it("follows the 201/404/409 rules and shows the same list at both paths", async () => {
    const me = (await signUp(request, "mine")).token;
    const missing = await request("POST", "/models/my", { token: me, body: { model_name: "never-pulled", hardware_notes: "x" } });
    assert.equal(missing.status, 404);
    assert.match(missing.body.detail, /not in the model catalog/);

    const created = await request("POST", "/models/my", { token: me, body: { model_name: "tinyllama", hardware_notes: "M2, 16 GB" } });
    assert.equal(created.status, 201);
    assert.deepEqual(Object.keys(created.body), ["id", "model_name", "hardware_notes", "created_at", "updated_at"]);
    assert.equal(created.body.model_name, "tinyllama:latest");
    assert.equal(created.body.hardware_notes, "M2, 16 GB");

    const dup = await request("POST", "/models/my", { token: me, body: { model_name: "tinyllama:latest", hardware_notes: "again" } });
    assert.equal(dup.status, 409);

    const mine = await request("GET", "/models/my", { token: me });
    assert.equal(mine.status, 200);
    assert.deepEqual(mine.body, [created.body]);
    assert.deepEqual((await request("GET", "/users/my/models", { token: me })).body, mine.body);

    const other = (await signUp(request, "other")).token;
    assert.deepEqual((await request("GET", "/models/my", { token: other })).body, []);
    // Someone else may keep the same model in their own list.
    assert.equal((await request("POST", "/models/my", { token: other, body: { model_name: "tinyllama" } })).status, 201);
  });

  it("updates notes with PUT; 404 for a model outside the catalog or outside the caller's list", async () => {
    const me = (await signUp(request, "put")).token;
    const created = await request("POST", "/models/my", { token: me, body: { model_name: "tinyllama", hardware_notes: "old" } });
    await new Promise((r) => setTimeout(r, 5));
    const updated = await request("PUT", "/models/my", { token: me, body: { model_name: "tinyllama", hardware_notes: "RTX 4090" } });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.id, created.body.id);
    assert.equal(updated.body.hardware_notes, "RTX 4090");
    assert.equal(updated.body.created_at, created.body.created_at);
    assert.notEqual(updated.body.updated_at, created.body.updated_at);
    assert.equal((await request("PUT", "/models/my", { token: me, body: { model_name: "never-pulled", hardware_notes: "x" } })).status, 404);
    const stranger = (await signUp(request, "stranger")).token;
    assert.equal((await request("PUT", "/models/my", { token: stranger, body: { model_name: "tinyllama", hardware_notes: "x" } })).status, 404);
    assert.equal((await request("PUT", "/models/my", { token: me, body: { model_name: "tinyllama" } })).status, 422);
  });

  it("deletes only the caller's own records (204, then 404)", async () => {
    const me = (await signUp(request, "del")).token;
    const created = await request("POST", "/models/my", { token: me, body: { model_name: "tinyllama" } });
    const stranger = (await signUp(request, "thief")).token;
    assert.equal((await request("DELETE", `/models/my/${created.body.id}`, { token: stranger })).status, 404);
    const gone = await request("DELETE", `/models/my/${created.body.id}`, { token: me });
    assert.equal(gone.status, 204);
    assert.equal(gone.text, "");
    assert.equal((await request("DELETE", `/models/my/${created.body.id}`, { token: me })).status, 404);
    assert.deepEqual((await request("GET", "/models/my", { token: me })).body, []);
  });

  it("DELETE /models/{id} removes the model from the catalog, every personal list and the model server", async () => {
    const id = last(await pull("tinyllama")).model.id;
    assert.equal(id, modelId);
    const a = (await signUp(request, "keep-a")).token;
    const b = (await signUp(request, "keep-b")).token;
    for (const t of [a, b]) assert.equal((await request("POST", "/models/my", { token: t, body: { model_name: "tinyllama" } })).status, 201);
    assert.ok(fake.installed().includes("tinyllama:latest"));
    const res = await request("DELETE", `/models/${id}`, { token: a });
    assert.equal(res.status, 204);
    assert.ok(!fake.installed().includes("tinyllama:latest"));
    assert.ok(fake.deleted.includes("tinyllama:latest"));
    assert.ok(!(await request("GET", "/models", { token: a })).body.some((m: { id: string }) => m.id === id));
    for (const t of [a, b]) assert.deepEqual((await request("GET", "/models/my", { token: t })).body, []);
    assert.equal((await request("DELETE", `/models/${id}`, { token: a })).status, 404);
    assert.equal((await request("DELETE", "/models/00000000-0000-4000-8000-000000000000", { token: a })).status, 404);
  });
});

describe("with the model server down", () => {
  let downToken: string;
  let catalogServer: http.Server;

  const down = useSluice({
    env: async () => {
      catalogServer = http.createServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ models: [{ name: "sluice-test-model", description: "A model only the refreshed catalog knows", capabilities: ["tools"], sizes: ["1b"], pulls: 5, updated_at: "2026-11-01T00:00:00" }] }));
      });
      await new Promise<void>((resolve) => catalogServer.listen(0, "127.0.0.1", resolve));
      const catalogUrl = `http://127.0.0.1:${(catalogServer.address() as AddressInfo).port}/library.json`;
      // Port 9 (discard) on loopback: nothing listens there.
      return { OLLAMA_HOST: "http://127.0.0.1:9", SLUICE_PULL_RETRY_DELAY_MS: "10", MODEL_LIBRARY_URL: catalogUrl };
    },
    setUp: async ({ request }) => {
      downToken = (await signUp(request, "offline")).token;
    },
  });
  const downRequest = down.request;
  after(async () => {
    await new Promise<void>((resolve) => catalogServer.close(() => resolve()));
  });

  it("still searches the library", async () => {
    const res = await downRequest("GET", "/models/library/search?q=lama", { token: downToken });
    assert.equal(res.status, 200);
    assert.match(res.body[0].name, /llama/);
  });

  it("answers a pull with an error event saying the model server cannot be reached", async () => {
    const res = await postSse(`${down.server.api}/models`, downToken, { model_name: "tinyllama" });
    assert.equal(res.status, 200);
    const end = last(res);
    assert.equal(end.status, "error");
    assert.match(end.error, /model server at http:\/\/127\.0\.0\.1:9 cannot be reached/);
    assert.equal(end.code, "model_server_unreachable");
  });

  it("GET /models/server says the model server does not answer, before anyone pulls", async () => {
    const res = await downRequest("GET", "/models/server", { token: downToken });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { reachable: false, version: null, on_this_machine: true });
  });

  it("refreshes the library from MODEL_LIBRARY_URL", async () => {
    const res = await downRequest("POST", "/models/library/refresh", { token: downToken });
    assert.equal(res.status, 200);
    assert.equal(res.body.count, 1);
    const found = await downRequest("GET", "/models/library/search?q=sluice-test", { token: downToken });
    assert.equal(found.body[0].name, "sluice-test-model");
  });
});
