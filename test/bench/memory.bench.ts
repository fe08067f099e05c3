import fs from "node:fs";
import path from "node:path";
import { startSamba } from "../fixtures/samba";
import { startSluice, tempDir } from "../fixtures/sluice-server";
import { startPostgres, type PostgresCluster } from "../fixtures/postgres";
import { addSmbSource, client, createGroup, signUp } from "../fixtures/http-client";
import { seeded, writeCorpus, zipfWord } from "./corpus";
import { cpuSeconds, peakRssMb, percentile, runWatched } from "./measure";

/**
 * `npm run bench -- --memory [--files N] [--binary N] [--real DIR] [--postgres]`: where the server's peak RSS
 * during one ingestion goes (SQLite; with --postgres, a team server's database on PostgreSQL). The server runs with SLUICE_HEAP_TRACE (server/diagnostics/heap-trace.ts),
 * so each thread logs its V8 heap; this samples the process's RSS from /proc every 50 ms and
 * prints, at the highest sample, each thread's heap beside the RSS split into anonymous memory
 * and mapped files. What anonymous memory the heaps do not explain is native: malloc (SQLite's
 * page caches, glibc arenas), thread stacks, V8's code space. Takes about a minute.
 */

interface ProcSample {
  t: number;
  rss: number;
  anon: number;
  file: number;
  threads: number;
}

interface HeapLine {
  t: number;
  thread: string;
  threadId: number;
  heapTotal: number;
  heapUsed: number;
  newSpace: number;
  malloced: number;
  external: number;
  arrayBuffers: number;
  /** The main thread's lines on glibc: malloc's totals over all arenas (server/memory/glibc-malloc.ts). */
  malloc?: { arena: number; hblkhd: number; uordblks: number; fordblks: number } | null;
  trims?: { trims: number; milliseconds: number; releasedBytes: number };
}

function procSample(pid: number): ProcSample | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
    return { t: Date.now(), rss: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile") + kb("RssShmem"), threads: Number(/Threads:\s+(\d+)/.exec(status)?.[1] ?? 0) };
  } catch {
    return null;
  }
}

function readTrace(file: string): HeapLine[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as HeapLine);
}

/** Each live thread's heap at the sample's time (its last line before it; threads silent for 300 ms before it had stopped), beside the RSS split. */
function printBreakdown(at: ProcSample, lines: HeapLine[]): void {
  const lastSeen = new Map<number, number>();
  for (const l of lines) lastSeen.set(l.threadId, Math.max(lastSeen.get(l.threadId) ?? 0, l.t));
  const latest = new Map<number, HeapLine>();
  for (const l of lines) {
    if (l.t > at.t || (lastSeen.get(l.threadId) ?? 0) < at.t - 300) continue;
    if ((latest.get(l.threadId)?.t ?? 0) < l.t) latest.set(l.threadId, l);
  }
  process.stdout.write(`  anonymous ${mb(at.anon)} MB, mapped files ${mb(at.file)} MB\n`);
  process.stdout.write("\n| thread | heap total | heap used | new space | V8 malloced | external | array buffers |\n|---|---|---|---|---|---|---|\n");
  let heaps = 0;
  for (const l of [...latest.values()].sort((a, b) => a.threadId - b.threadId)) {
    heaps += l.heapTotal + l.malloced;
    process.stdout.write(`| ${l.thread} #${l.threadId} | ${mb(l.heapTotal)} | ${mb(l.heapUsed)} | ${mb(l.newSpace)} | ${mb(l.malloced)} | ${mb(l.external)} | ${mb(l.arrayBuffers)} |\n`);
  }
  process.stdout.write(`\nV8 heaps (total + malloced) ${mb(heaps)} MB; anonymous memory not in a V8 heap ${mb(at.anon - heaps)} MB (malloc: SQLite, buffers, arenas; stacks; code)\n`);
  const malloc = latest.get(0)?.malloc;
  if (malloc) process.stdout.write(`  glibc malloc: arenas ${mb(malloc.arena)} MB (in use ${mb(malloc.uordblks)}, free but held ${mb(malloc.fordblks)}), mmapped chunks ${mb(malloc.hblkhd)} MB\n`);
}

/**
 * The process's anonymous memory by mapping size, from /proc/PID/smaps: glibc's per-thread malloc
 * arenas are mappings of up to 64 MB (their reserved rest is a separate no-access mapping), V8's
 * heap pages 256 KB each, big buffers mappings of their own.
 */
function printMappings(pid: number): void {
  const groups = new Map<string, { count: number; rss: number }>();
  let current: { name: string; size: number } | null = null;
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      current = { name: head[4] || "anonymous", size: (Number.parseInt(head[2], 16) - Number.parseInt(head[1], 16)) / 1024 };
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (!rss || !current || Number(rss[1]) === 0) continue;
    if (current.name !== "anonymous" && current.name !== "[heap]" && current.name !== "[stack]") continue;
    const kind = current.name !== "anonymous" ? current.name : current.size >= 32 * 1024 && current.size <= 65536 ? "32-64 MB (malloc arenas)" : current.size <= 256 ? "<= 256 KB (V8 pages, stacks)" : current.size < 32 * 1024 ? "256 KB - 32 MB" : "> 64 MB";
    const g = groups.get(kind) ?? { count: 0, rss: 0 };
    g.count++;
    g.rss += Number(rss[1]) * 1024;
    groups.set(kind, g);
  }
  process.stdout.write(`  anonymous mappings: ${[...groups].map(([k, g]) => `${k}: ${g.count}, ${mb(g.rss)} MB`).join("; ")}\n`);
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)}`;

/** Each thread's highest heap (total + malloced) and highest array buffers over the whole trace: what grows with a job's length shows here even when the RSS peak falls elsewhere. */
function printThreadPeaks(lines: HeapLine[]): void {
  const peaks = new Map<number, { thread: string; heap: number; arrayBuffers: number; external: number }>();
  for (const l of lines) {
    const p = peaks.get(l.threadId) ?? { thread: l.thread, heap: 0, arrayBuffers: 0, external: 0 };
    p.heap = Math.max(p.heap, l.heapTotal + l.malloced);
    p.arrayBuffers = Math.max(p.arrayBuffers, l.arrayBuffers);
    p.external = Math.max(p.external, l.external);
    peaks.set(l.threadId, p);
  }
  process.stdout.write("\n| thread | highest heap (total + malloced) | highest external | highest array buffers |\n|---|---|---|---|\n");
  for (const [id, p] of [...peaks].sort(([a], [b]) => a - b)) process.stdout.write(`| ${p.thread} #${id} | ${mb(p.heap)} | ${mb(p.external)} | ${mb(p.arrayBuffers)} |\n`);
}

export async function runMemoryBench(opts: { files: number; binaryFiles?: number; realDir?: string; runs?: number; postgres?: boolean }): Promise<void> {
  let corpusDir = opts.realDir;
  let words: string[] = ["the"];
  const ownCorpus = !corpusDir;
  if (!corpusDir) {
    corpusDir = tempDir("sluice-memory-");
    fs.chmodSync(corpusDir, 0o755);
    const corpus = await writeCorpus(corpusDir, { textFiles: opts.files, binaryFiles: opts.binaryFiles ?? Math.max(2, Math.round(opts.files / 100)) });
    words = corpus.words;
    process.stdout.write(`corpus: ${corpus.files} files, ${mb(corpus.bytes)} MB\n`);
  }
  const trace = path.join(tempDir("sluice-heap-trace-"), "trace.jsonl");
  const postgres: PostgresCluster | null = opts.postgres ? await startPostgres() : null;
  const databaseUrl: Record<string, string> = postgres ? { DATABASE_URL: await postgres.createDatabase() } : {};
  const samba = await startSamba({ extraShares: { corpus: corpusDir } });
  const server = await startSluice({ env: { SMB_TIMEOUT_MS: "15000", SLUICE_HEAP_TRACE: trace, ...databaseUrl } });
  try {
    const pid = server.child.pid!;
    const request = client(server.api);
    const user = await signUp(request, "memory");
    const group = await createGroup(request, user.token, "memory");
    const idle = procSample(pid)!;
    // Earlier ingestions of the same share into collections of their own (as `npm run bench` runs several): the peak reported is the last one's.
    for (let i = 1; i < (opts.runs ?? 1); i++) {
      const earlier = await addSmbSource(request, user.token, group, samba, `Memory corpus ${i}`);
      await runWatched(request, user.token, earlier.pipeline.id, { everyMs: 200 });
      process.stdout.write(`run ${i}: RSS now ${mb(procSample(pid)!.rss)} MB, peak so far ${peakRssMb(pid).toFixed(0)} MB\n`);
    }
    const { pipeline } = await addSmbSource(request, user.token, group, samba, "Memory corpus");
    const samples: ProcSample[] = [];
    const timer = setInterval(() => {
      const s = procSample(pid);
      if (s) samples.push(s);
    }, 50);
    const cpuBefore = cpuSeconds(pid);
    const run = await runWatched(request, user.token, pipeline.id, { everyMs: 200 });
    clearInterval(timer);
    const cpu = cpuSeconds(pid) - cpuBefore;
    if (run.job.status !== "completed") process.stdout.write(`job ended ${run.job.status}: ${run.job.error ?? ""}\n`);
    const peak = samples.reduce((a, b) => (b.rss > a.rss ? b : a));
    process.stdout.write(`\ningestion ${run.seconds.toFixed(1)} s (server CPU ${cpu.toFixed(1)} s), ${run.job.entities_processed} files; idle RSS ${mb(idle.rss)} MB; peak RSS ${mb(peak.rss)} MB at ${((peak.t - samples[0].t) / 1000).toFixed(1)} s (VmHWM ${peakRssMb(pid).toFixed(0)} MB), ${peak.threads} OS threads\n`);
    printBreakdown(peak, readTrace(trace));
    printThreadPeaks(readTrace(trace));
    printMappings(pid);
    // Then searches of the collection, as `npm run bench` runs after its ingestions: the reader threads start.
    const random = seeded(11);
    const latencies: number[] = [];
    for (let i = 0; i < 500; i++) {
      const q = Array.from({ length: 1 + Math.floor(random() * 3) }, () => zipfWord(words, random)).join(" ");
      const t = performance.now();
      const res = await request("GET", `/collections/${pipeline.collection_id}/search?q=${encodeURIComponent(q)}`, { token: user.token });
      if (res.status !== 200) throw new Error(`search failed: ${res.text}`);
      latencies.push(performance.now() - t);
    }
    latencies.sort((a, b) => a - b);
    const after = procSample(pid)!;
    process.stdout.write(`\nafter 500 searches (p50 ${percentile(latencies, 50).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms): RSS ${mb(after.rss)} MB (VmHWM ${peakRssMb(pid).toFixed(0)} MB), ${after.threads} OS threads\n`);
    printBreakdown(after, readTrace(trace));
    process.stdout.write("\nRSS over the ingestion (MB, every second): ");
    let next = samples[0].t;
    for (const s of samples) {
      if (s.t >= next) {
        process.stdout.write(`${(s.rss / 1024 / 1024).toFixed(0)} `);
        next += 1000;
      }
    }
    process.stdout.write("\n");
    const mallocLines = readTrace(trace).filter((l) => l.threadId === 0 && l.malloc && l.t >= samples[0].t && l.t <= samples[samples.length - 1].t);
    if (mallocLines.length > 0) {
      process.stdout.write("glibc malloc over the ingestion, in use / free but held (MB, every second): ");
      next = mallocLines[0].t;
      for (const l of mallocLines) {
        if (l.t >= next) {
          process.stdout.write(`${(l.malloc!.uordblks / 1024 / 1024).toFixed(0)}/${(l.malloc!.fordblks / 1024 / 1024).toFixed(0)} `);
          next += 1000;
        }
      }
      process.stdout.write("\n");
    }
    // The server trims after each job (server/ingest/job-thread.ts): what those trims gave back, all runs.
    const trims = readTrace(trace).filter((l) => l.threadId === 0 && l.trims).pop()?.trims;
    if (trims) process.stdout.write(`malloc_trim since the server started: ${trims.trims} calls, RSS ${mb(trims.releasedBytes)} MB lower across them, ${trims.milliseconds.toFixed(0)} ms in all\n`);
  } finally {
    await server.stop();
    await samba.stop();
    await postgres?.stop();
    if (ownCorpus) fs.rmSync(corpusDir, { recursive: true, force: true });
  }
}
