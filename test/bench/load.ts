import fs from "node:fs";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import autocannon from "autocannon";
import { client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { startSluice, tempDir } from "../fixtures/sluice-server";
import { prose, seeded, vocabulary, zipfWord } from "./corpus";
import { skewedQueries, writeSkewedCorpus } from "./skewed-corpus";
import { CLOCK_TICKS } from "./measure";

/**
 * `npm run bench:load [-- --connections N --duration S --files N]`: many LAN clients against one
 * server holding one collection (issue 20 item 6). autocannon holds N connections (default 100)
 * for S seconds (default 30) with a bearer token: two thirds searches, the rest status polls,
 * collection lists and document pages. Once idle, once during an ingestion of a second folder of
 * the same size; that ingestion is also timed alone, for the slowdown ratio (each from the job's
 * own started/completed times, so the trigger and the polling are not counted). Prints
 * requests/s, p50/p99/max and errors per route, each figure beside its target with ok/MISSED,
 * and this process's own event-loop delay: autocannon runs on its thread, and a stalled client
 * would report its own stall as the server's latency.
 *
 * `--idle-duration S` sets the idle run's length apart (0: none), for a quick look at the run
 * during an ingestion; `--timeline` also prints that run second by second.
 *
 * `--corpus second`: the served collection is the bench's second corpus (skewed-corpus.ts, `--files`
 * of its files) and the searches are 64 different queries of its mix (mostly rare words), so the
 * result cache answers few of them and the reader threads do the work (issue 36 item 4); the
 * other routes are repeated to keep two thirds searches.
 */

const TARGET_RPS = 1000;
const TARGET_P99_MS = 100;
const TARGET_MAX_MS = 1000;
const TARGET_SLOWDOWN = 1.5;

function flag(name: string, fallback: number, least = 1): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? Number(process.argv[at + 1]) : fallback;
  if (!Number.isFinite(value) || value < least) throw new Error(`--${name} must be a number from ${least}`);
  return value;
}

/** The corpora `--corpus` names, as the search bench does: the first (~10 KB Markdown memos, the default) or the second (skewed-corpus.ts). */
const CORPORA = ["first", "second"] as const;

/** `--corpus`'s value; an unknown one (or none after the flag) stops the bench rather than running the default under another name. */
function corpusFlag(): (typeof CORPORA)[number] {
  const at = process.argv.indexOf("--corpus");
  if (at < 0) return "first";
  const value = process.argv[at + 1];
  const known = CORPORA.find((name) => name === value);
  if (!known) throw new Error(`--corpus must be one of ${CORPORA.join(", ")} (got ${value === undefined ? "nothing" : JSON.stringify(value)})`);
  return known;
}

function writeFolder(dir: string, files: number, seed: number): string[] {
  const random = seeded(seed);
  const words = vocabulary(5000, seeded(7));
  for (let i = 0; i < files; i++) {
    const folder = path.join(dir, `part-${Math.floor(i / 100)}`);
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, `memo-${i}.md`), `# Memo ${i}\n\n${prose(words, random, 10_000)}\n`);
  }
  // Queries people type: one or two common-to-middling words.
  const pick = seeded(11);
  return Array.from({ length: 16 }, (_, i) => (i % 2 ? `${zipfWord(words, pick)} ${zipfWord(words, pick)}` : zipfWord(words, pick)));
}

/** CPU seconds so far of a process's main thread and of all its other threads (/proc/<pid>/task). */
function threadCpu(pid: number): { main: number; others: number } {
  let main = 0;
  let others = 0;
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const [utime, stime] = stat.slice(stat.lastIndexOf(")") + 2).split(" ").slice(11, 13).map(Number);
      const seconds = (utime + stime) / CLOCK_TICKS;
      if (Number(tid) === pid) main += seconds;
      else others += seconds;
    } catch {
      // a thread that ended meanwhile
    }
  }
  return { main, others };
}

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

interface RouteStats {
  latencies: number[];
  non2xx: number;
  status5xx: number;
}

type Route = "search" | "status" | "collections" | "documents";

/** One autocannon run over the route mix; latencies per route from each response (the client's request index names its route). */
async function load(url: string, token: string, routes: Array<{ route: Route; path: string }>, connections: number, seconds: number) {
  const stats = new Map<Route, RouteStats>(routes.map((r) => [r.route, { latencies: [], non2xx: 0, status5xx: 0 }]));
  // Per second of the run: answers and the slowest, by when each answer came.
  const started = performance.now();
  const timeline: Array<{ answers: number; maxMs: number }> = [];
  const clientDelay = monitorEventLoopDelay({ resolution: 10 });
  clientDelay.enable();
  const instance = autocannon({
    url,
    connections,
    duration: seconds,
    timeout: 10,
    headers: { authorization: `Bearer ${token}` },
    requests: routes.map((r) => ({ method: "GET", path: r.path })),
  });
  instance.on("response", (c: { requestIterator: { currentRequestIndex: number } }, status: number, _bytes: number, ms: number) => {
    const s = stats.get(routes[c.requestIterator.currentRequestIndex].route)!;
    s.latencies.push(ms);
    const second = Math.floor((performance.now() - started) / 1000);
    while (timeline.length <= second) timeline.push({ answers: 0, maxMs: 0 });
    timeline[second].answers += 1;
    timeline[second].maxMs = Math.max(timeline[second].maxMs, ms);
    if (status < 200 || status >= 300) s.non2xx += 1;
    if (status >= 500) s.status5xx += 1;
  });
  const result = await instance;
  clientDelay.disable();
  return { stats, seconds: result.duration, errors: result.errors, timeouts: result.timeouts, timeline, clientDelayMaxMs: clientDelay.max / 1e6 };
}

let allOk = true;
function line(name: string, value: string, target = "", ok: boolean | null = null): void {
  if (ok === false) allOk = false;
  process.stdout.write(`  ${name.padEnd(34)} ${value.padStart(12)}  ${target.padEnd(12)} ${ok === null ? "" : ok ? "ok" : "MISSED"}\n`);
}

function print(title: string, run: Awaited<ReturnType<typeof load>>): void {
  process.stdout.write(`\n${title}\n`);
  const all: number[] = [];
  let status5xx = 0;
  let non2xx = 0;
  for (const [route, s] of run.stats) {
    const sorted = [...s.latencies].sort((a, b) => a - b);
    all.push(...sorted);
    status5xx += s.status5xx;
    non2xx += s.non2xx;
    process.stdout.write(
      `  ${route.padEnd(12)} ${String(sorted.length).padStart(7)} req  ${(sorted.length / run.seconds).toFixed(0).padStart(6)}/s  p50 ${percentile(sorted, 50).toFixed(1).padStart(7)} ms  p99 ${percentile(sorted, 99).toFixed(1).padStart(7)} ms  max ${(sorted.at(-1) ?? NaN).toFixed(0).padStart(6)} ms  non-2xx ${s.non2xx}\n`,
    );
  }
  all.sort((a, b) => a - b);
  line("requests/s", (all.length / run.seconds).toFixed(0), `>= ${TARGET_RPS}`, all.length / run.seconds >= TARGET_RPS);
  line("p99 (all routes)", `${percentile(all, 99).toFixed(1)} ms`, `< ${TARGET_P99_MS} ms`, percentile(all, 99) < TARGET_P99_MS);
  line("answered after more than 1 s", String(all.filter((ms) => ms > TARGET_MAX_MS).length), "0", all.every((ms) => ms <= TARGET_MAX_MS));
  line("5xx", String(status5xx), "0", status5xx === 0);
  line("other non-2xx", String(non2xx - status5xx), "", null);
  line("errors (timeouts > 10 s)", `${run.errors} (${run.timeouts})`, "0", run.errors === 0);
  // Not a target: how far this process's own latencies can be trusted (a stall here is added to every answer it was waiting for).
  line("client event-loop delay, max", `${run.clientDelayMaxMs.toFixed(0)} ms`);
}

function printTimeline(run: Awaited<ReturnType<typeof load>>): void {
  process.stdout.write("\n  second  answers  slowest\n");
  for (const [i, s] of run.timeline.entries()) process.stdout.write(`  ${String(i).padStart(6)}  ${String(s.answers).padStart(7)}  ${s.maxMs.toFixed(0).padStart(5)} ms\n`);
}

/** The job's own running time, from its record: the trigger's round trip and the polling's last interval are not the job's. */
async function ingest(request: Request, token: string, pipelineId: string): Promise<number> {
  const res = await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token });
  if (res.status !== 202) throw new Error(`trigger failed: ${res.status} ${res.text}`);
  const done = await waitForJobEnd(request, token, pipelineId, 30 * 60_000);
  if (done.status !== "completed") throw new Error(`ingestion ended ${done.status}: ${done.error_message}`);
  // Wire timestamps are UTC without the zone (isoNoZone).
  return (Date.parse(`${done.completed_at}Z`) - Date.parse(`${done.started_at}Z`)) / 1000;
}

async function main(): Promise<void> {
  const connections = flag("connections", 100);
  const seconds = flag("duration", 30);
  const files = flag("files", 1700);
  const idleSeconds = flag("idle-duration", seconds, 0);
  const timeline = process.argv.includes("--timeline");
  const root = fs.realpathSync(tempDir("sluice-load-bench-"));
  const second = corpusFlag() === "second";
  process.stdout.write(`load benchmark: ${connections} connections for ${seconds} s, a collection of ${files} files ${second ? "of the second corpus (skewed-corpus.ts)" : "(~10 KB Markdown)"}\n`);
  const queries = second ? skewedQueries(writeSkewedCorpus(path.join(root, "served"), files).words, 64) : writeFolder(path.join(root, "served"), files, 1);
  writeFolder(path.join(root, "alone"), files, 2);
  writeFolder(path.join(root, "loaded"), files, 2);

  const server = await startSluice({ env: { FOLDER_SOURCE_ROOTS: root, LOG_LEVEL: "warn" } });
  try {
    const request = client(server.api);
    const { token } = await signUp(request, "bench-load");
    const group = await createGroup(request, token, "bench");
    const add = async (name: string) => {
      const res = await request("POST", `/data_sources/folder/${group}`, { token, body: { data_source: { data_source_name: name }, folder_source: { path: path.join(root, name) } } });
      if (res.status !== 201) throw new Error(`source creation failed: ${res.status} ${res.text}`);
      return res.body.pipeline as { id: string; collection_id: string };
    };
    const served = await add("served");
    const alone = await add("alone");
    const loaded = await add("loaded");
    await ingest(request, token, served.id);

    // Two thirds searches; the rest status polls, collection lists and document pages.
    const searches = second ? 64 : 8;
    const others: Array<{ route: Route; path: string }> = [
      { route: "status", path: `/api/data_pipelines/${served.id}/ingest/status` },
      { route: "status", path: `/api/data_pipelines/${loaded.id}/ingest/status` },
      { route: "collections", path: "/api/collections" },
      { route: "documents", path: `/api/collections/${served.collection_id}/documents?offset=${Math.floor(files / 2)}&limit=50` },
    ];
    // Interleaved, one other request after every two searches: autocannon sends the list in order on
    // every connection, from its start, so with all 64 searches first (--corpus second) a run shorter
    // than a connection's 64 searches answered no status, collections or documents request at all.
    const routes: Array<{ route: Route; path: string }> = queries.slice(0, searches).flatMap((q, i) => [
      { route: "search" as const, path: `/api/collections/${served.collection_id}/search?q=${encodeURIComponent(q)}&top_k=10` },
      ...(i % 2 === 1 ? [others[((i - 1) / 2) % others.length]] : []),
    ]);

    if (idleSeconds > 0) {
      const before = threadCpu(server.child.pid!);
      const idle = await load(server.url, token, routes, connections, idleSeconds);
      print("idle (nothing else running)", idle);
      const after = threadCpu(server.child.pid!);
      // Whether the searches use both cores and leave the API's thread room: its share of a core, and the other threads' (readers, writer).
      line("API thread, cores busy", ((after.main - before.main) / idle.seconds).toFixed(2));
      line("other threads, cores busy", ((after.others - before.others) / idle.seconds).toFixed(2));
    }

    const aloneSeconds = await ingest(request, token, alone.id);
    const during = load(server.url, token, routes, connections, seconds);
    const loadedSeconds = await ingest(request, token, loaded.id);
    const duringRun = await during;
    print("during an ingestion", duringRun);
    if (timeline) printTimeline(duringRun);
    process.stdout.write("\ningestion of the same folder (the job's own started/completed times)\n");
    line("alone", `${aloneSeconds.toFixed(1)} s`);
    line(`under load${loadedSeconds > seconds ? " (outlasted the load)" : ""}`, `${loadedSeconds.toFixed(1)} s`);
    const ratio = loadedSeconds / aloneSeconds;
    line("slowdown under load", `${ratio.toFixed(2)}x`, `<= ${TARGET_SLOWDOWN}x`, ratio <= TARGET_SLOWDOWN);
    process.stdout.write(`\n${allOk ? "every target met" : "some targets MISSED"}\n`);
  } finally {
    await server.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`load benchmark failed: ${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
