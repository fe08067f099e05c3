import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { client, createGroup, signUp, waitForJobEnd } from "../fixtures/http-client";
import { wordsOf } from "../fixtures/scans";
import { startSluice, tempDir } from "../fixtures/sluice-server";
import { CLOCK_TICKS, CORES, cpuSeconds, peakRssMb, verdict } from "./measure";
import { JOB_POLL_MS, tesseractCommand } from "./ocr-reference";
import { realScanShare, type RealDocument } from "./real-scans";

/**
 * Issue 35's target on real scanned pages nobody here wrote (real-scans.ts: Leptonica's and
 * Tesseract's test scans from Debian's source packages, as pictures, scanned PDFs and a
 * multi-page TIFF): of the words of 4 letters or more that the `tesseract` command reads on a
 * page, how many a Sluice search of that word finds in that file (>= 95 %), and on that page
 * (>= 98 %, in the files of several pages); the whole ingestion's time against the command's on
 * the same pages one after another on one thread (<= 1); the server's peak memory (< 400 MB).
 * `npm run bench -- --ocr-real [--pages N] [--scans-cache DIR]`.
 */
export interface OcrRealBenchOptions {
  /** Where the Debian source tarballs and the extracted scans are kept between runs. */
  cacheDir: string;
  /** At most this many pages (whole documents, in REAL_SCAN_DOCUMENTS's order): a small run to see it work. */
  pages?: number;
}

export const DEFAULT_SCANS_CACHE = path.join(os.homedir(), ".cache", "sluice-bench", "real-scans");

const TARGET = { recall: 95, page: 98, timeRatio: 1, peakMb: 400 };

/** Words of 4 letters or more, lower case (what is searched). */

/** CPU seconds of a process's threads, by the thread's name (Node's own threads are all "node"; V8's and libuv's helpers have theirs), most first. */
function threadCpu(pid: number): string {
  const byName = new Map<string, number[]>();
  for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = task === String(pid) ? "main" : fs.readFileSync(`/proc/${pid}/task/${task}/comm`, "utf8").trim();
      const stat = fs.readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8");
      const [utime, stime] = stat.slice(stat.lastIndexOf(")") + 2).split(" ").slice(11, 13).map(Number);
      byName.set(name, [...(byName.get(name) ?? []), (utime + stime) / CLOCK_TICKS]);
    } catch {
      // ended meanwhile
    }
  }
  return [...byName]
    .map(([name, each]) => ({ name, each: each.sort((a, b) => b - a) }))
    .sort((a, b) => b.each[0] - a.each[0])
    .map(({ name, each }) => `${name} ${each.filter((s) => s >= 0.05).map((s) => s.toFixed(1)).join("/") || "0"}`)
    .join(", ");
}

/** The resident memory of a process and of every process below it (the tesseract commands a parser thread started), in MB; 0 once it is gone. */
function treeRssMb(pid: number): number {
  let total = 0;
  try {
    total += Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      const children = fs.readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
      for (const child of children ? children.split(/\s+/).map(Number) : []) total += treeRssMb(child);
    }
  } catch {
    // gone meanwhile
  }
  return total;
}

export async function runOcrRealBench(opts: OcrRealBenchOptions): Promise<void> {
  const dir = fs.realpathSync(tempDir("sluice-ocr-real-"));
  const share = path.join(dir, "share");
  try {
    const documents = await realScanShare(opts.cacheDir, share, opts.pages);
    const pages = documents.flatMap((doc) => doc.pages.map((page) => ({ doc, ...page })));
    const formats = [...new Set(documents.map((doc) => (doc.as === "picture" ? path.extname(doc.relativePath).slice(1) : `${doc.as} of ${doc.pages.length} pages`)))];
    process.stdout.write(
      `\nOCR on real scans: ${pages.length} pages in ${documents.length} files (${formats.join(", ")}), ${CORES} cores; the scans cached in ${opts.cacheDir}\n` +
        `Sources: ${[...new Set(documents.map((doc) => doc.licence))].join("; ")}\n\n| measure | value | target |\n|---|---|---|\n`,
    );
    const row = (name: string, value: string, target = "") => process.stdout.write(`| ${name} | ${value} | ${target} |\n`);

    // The reference: the command on each scan, one after another, one thread.
    // CPU seconds as well as the wall clock: on a busy machine the wall clock says more about the other work than about this.
    const childrenCpu = () => cpuSeconds(process.pid, true) - cpuSeconds(process.pid);
    const commandStart = performance.now();
    const commandCpuStart = childrenCpu();
    const read = new Map<RealDocument, string[]>(documents.map((doc) => [doc, []]));
    for (const page of pages) read.get(page.doc)![page.page - 1] = await tesseractCommand(page.file);
    const commandSeconds = (performance.now() - commandStart) / 1000;
    const commandCpu = childrenCpu() - commandCpuStart;
    row("`tesseract` command, one thread, one page after another", `${commandSeconds.toFixed(1)} s (${(commandSeconds / pages.length).toFixed(2)} s/page), ${commandCpu.toFixed(1)} s of CPU`);

    const server = await startSluice({ env: { FOLDER_SOURCE_ROOTS: dir } });
    let peakTree = 0;
    const sampler = setInterval(() => (peakTree = Math.max(peakTree, treeRssMb(server.child.pid!))), 100);
    try {
      const request = client(server.api);
      const owner = await signUp(request, "ocr-real-bench");
      const group = await createGroup(request, owner.token);
      const created = await request("POST", `/data_sources/folder/${group}`, { token: owner.token, body: { data_source: { data_source_name: "Real scans" }, folder_source: { path: share } } });
      if (created.status !== 201) throw new Error(`the folder source was refused: ${created.text}`);
      const { id: pipeline, collection_id: collection } = created.body.pipeline;
      const pid = server.child.pid!;
      const ownCpuStart = cpuSeconds(pid);
      const childCpuStart = cpuSeconds(pid, true) - ownCpuStart;
      const start = performance.now();
      await request("POST", `/data_pipelines/${pipeline}/ingest`, { token: owner.token });
      const job = await waitForJobEnd(request, owner.token, pipeline, 24 * 3600_000, JOB_POLL_MS);
      const seconds = (performance.now() - start) / 1000;
      clearInterval(sampler);
      const ownCpu = cpuSeconds(pid) - ownCpuStart;
      const childCpu = cpuSeconds(pid, true) - cpuSeconds(pid) - childCpuStart;
      const timings = Object.entries(job.timings ?? {}).map(([stage, s]) => `${stage} ${s}`).join(", ");
      row("Sluice ingestion of the share (trigger to job end)", `${seconds.toFixed(1)} s; job ${job.status}, ${job.entities_processed} files, ${job.entities_failed} failed; ${timings}`);
      row("  CPU: the tesseract processes it ran, its own threads", `${childCpu.toFixed(1)} s, ${ownCpu.toFixed(1)} s (the command's: ${commandCpu.toFixed(1)} s)`);
      row("  the server's CPU by thread since it started", threadCpu(pid));
      for (const error of (job.errors ?? []) as Array<{ entity: string; message: string }>) row("  failed file", `${error.entity}: ${error.message}`);
      const ratio = seconds / commandSeconds;
      row("ingestion time against the command's one-thread time", ratio.toFixed(2), `<= ${TARGET.timeRatio}: ${verdict(ratio <= TARGET.timeRatio)}`);
      const peak = peakRssMb(server.child.pid!);
      row("Sluice server peak memory (VmHWM)", `${peak.toFixed(0)} MB`, `< ${TARGET.peakMb} MB: ${verdict(peak < TARGET.peakMb)}`);
      row("  with the tesseract processes it ran (sampled every 0.1 s)", `${peakTree.toFixed(0)} MB`);

      // Every word the command read, searched in its file (the file's own folder): found, and on the page it read it on.
      let words = 0;
      let found = 0;
      let paged = 0;
      let rightPage = 0;
      const missed: string[] = [];
      const wrongPage: string[] = [];
      for (const doc of documents) {
        const pagesOf = new Map<string, Set<number>>();
        read.get(doc)!.forEach((text, i) => {
          for (const word of wordsOf(text, 4)) pagesOf.set(word, (pagesOf.get(word) ?? new Set()).add(i + 1));
        });
        const folder = path.posix.dirname(doc.relativePath);
        for (const [word, on] of pagesOf) {
          const res = await request("GET", `/collections/${collection}/search?q=${encodeURIComponent(`"${word}"`)}&folder=${encodeURIComponent(folder)}&top_k=100`, { token: owner.token });
          if (res.status !== 200) throw new Error(`search "${word}" answered ${res.status}: ${res.text}`);
          const hits = (res.body.results ?? []) as Array<{ path: string; page: number | null }>;
          words++;
          if (hits.length === 0) {
            if (missed.length < 12) missed.push(`${word} (${path.posix.basename(doc.relativePath)})`);
            continue;
          }
          found++;
          if (doc.pages.length < 2) continue;
          paged++;
          if (hits.some((hit) => hit.page !== null && on.has(hit.page))) rightPage++;
          else if (wrongPage.length < 12) wrongPage.push(`${word} (${path.posix.basename(doc.relativePath)} p. ${[...on].join("/")}, hit p. ${hits.map((hit) => hit.page).join("/")})`);
        }
      }
      const recall = (100 * found) / Math.max(1, words);
      const pageRight = (100 * rightPage) / Math.max(1, paged);
      row("words the command reads that a Sluice search finds in that file", `${recall.toFixed(1)} % of ${words}`, `>= ${TARGET.recall} %: ${verdict(recall >= TARGET.recall)}`);
      if (missed.length > 0) row("  some missed", missed.join(", "));
      row("of those found in a file of several pages, a hit on a page the command read it on", `${pageRight.toFixed(1)} % of ${paged}`, `>= ${TARGET.page} %: ${verdict(pageRight >= TARGET.page)}`);
      if (wrongPage.length > 0) row("  some on another page", wrongPage.join(", "));
    } finally {
      clearInterval(sampler);
      await server.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
