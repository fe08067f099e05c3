import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import type { SambaServer } from "../fixtures/samba";
import { tempDir } from "../fixtures/sluice-server";
import type { Request } from "../fixtures/http-client";

/** Measuring helpers the benches share: process CPU and memory from /proc, order statistics, targets. */

export const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** CPU seconds (user + system) a process used, its worker threads included; with `children`, also its waited-for children's. */
export function cpuSeconds(pid: number, children = false): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After the command: state is field 3, so utime (14), stime (15), cutime (16), cstime (17) sit at 11..14.
    const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
    return (utime + stime + (children ? cutime + cstime : 0)) / CLOCK_TICKS;
  } catch {
    return 0; // exited
  }
}

/** CPU seconds of a test Samba so far: the parent smbd with its reaped children, and the live per-connection children. */
export function sambaCpuSeconds(samba: SambaServer): number {
  return cpuSeconds(samba.pid, true) + samba.clientPids().reduce((sum, pid) => sum + cpuSeconds(pid), 0);
}

/** CPU seconds of a process, its reaped children and its live children (a PostgreSQL postmaster with its backends). */
export function treeCpuSeconds(pid: number): number {
  let children: number[] = [];
  try {
    children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // exited, or a kernel without the children file: the parent's own figure only
  }
  return cpuSeconds(pid, true) + children.reduce((sum, child) => sum + cpuSeconds(child), 0);
}

/** A window of this length with at most one clock tick (10 ms) of a process's CPU in it counts as quiet. */
const QUIET_WINDOW_MS = 200;

/**
 * Waits until a process's CPU goes quiet (one QUIET_WINDOW_MS with at most a tick of CPU), for
 * at most `limitMs`, and answers the seconds until that window began: work a job leaves behind
 * (SQLite's settle, run right after the job's end, decision 0536) is so counted in the job's CPU
 * and kept out of the next measurement.
 */
export async function quietSeconds(pid: number, limitMs = 10_000): Promise<number> {
  const start = performance.now();
  for (;;) {
    const windowStart = performance.now();
    const before = cpuSeconds(pid);
    await new Promise((r) => setTimeout(r, QUIET_WINDOW_MS));
    if (cpuSeconds(pid) - before <= 1 / CLOCK_TICKS + 1e-9 || performance.now() - start > limitMs) return (windowStart - start) / 1000;
  }
}

export function peakRssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

export const CORES = os.availableParallelism();

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function verdict(ok: boolean): "ok" | "MISSED" {
  return ok ? "ok" : "MISSED";
}

/** One recursive smbclient mget of a share into a throwaway directory: seconds. */
export function mgetSeconds(samba: SambaServer, share: string, extraArgs: string[] = []): number {
  const target = tempDir("sluice-mget-");
  const start = performance.now();
  try {
    execFileSync(
      "smbclient",
      [`//127.0.0.1/${share}`, "-p", String(samba.port), "-U", `${samba.username}%${samba.password}`, ...extraArgs, "-c", `prompt OFF; recurse ON; lcd ${target}; mget *`],
      { stdio: "ignore" },
    );
    return (performance.now() - start) / 1000;
  } finally {
    fs.rmSync(target, { recursive: true, force: true });
  }
}

export interface Stall {
  /** Seconds into the run the stretch began, its length, and the file the job showed then. */
  at: number;
  seconds: number;
  current: string;
}

export interface WatchedJob {
  seconds: number;
  job: Record<string, any>;
  stalls: Stall[];
}

/**
 * Triggers a pipeline's ingestion and samples its status every `everyMs` until it ends.
 * A stall is a stretch of at least `stallSeconds` in which no file finished
 * (entities_processed did not move); each is reported with the file the status showed during it.
 */
export async function runWatched(request: Request, token: string, pipelineId: string, opts: { everyMs?: number; stallSeconds?: number } = {}): Promise<WatchedJob> {
  const everyMs = opts.everyMs ?? 250;
  const stallSeconds = opts.stallSeconds ?? 5;
  const start = performance.now();
  const trigger = await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token });
  if (trigger.status !== 202) throw new Error(`trigger failed: ${trigger.text}`);
  const stalls: Stall[] = [];
  let lastCount = -1;
  let lastMove = start;
  let shownBefore = "";
  const closeStretch = (now: number) => {
    if ((now - lastMove) / 1000 >= stallSeconds) stalls.push({ at: (lastMove - start) / 1000, seconds: (now - lastMove) / 1000, current: shownBefore });
  };
  for (;;) {
    const status = await request("GET", `/data_pipelines/${pipelineId}/ingest/status`, { token });
    const now = performance.now();
    const job = status.body as Record<string, any>;
    if (job.entities_processed !== lastCount) {
      closeStretch(now);
      lastCount = job.entities_processed;
      lastMove = now;
    }
    if (job.status !== "processing") {
      closeStretch(now);
      return { seconds: (now - start) / 1000, job, stalls };
    }
    shownBefore = job.current_entity;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The job's stage seconds as one line: "listing 0.1 s, read 2.0 s, ...". */
export function stageLine(timings: Record<string, number> | null | undefined): string {
  if (!timings) return "(not recorded)";
  return Object.entries(timings)
    .map(([stage, s]) => `${stage.replace(/_s$/, "")} ${s.toFixed(2)} s`)
    .join(", ");
}

/**
 * The machine's speed that day, to set runs on different days side by side: the fastest of three
 * runs of a fixed integer loop on this thread, in ms (lower is faster). Figures of two runs are
 * comparable only as far as these are close (the shared 2-core machine read 116-120 ms on
 * 2026-11-29, a day it ran ~1.5 times slower than four days before).
 */
export function machineSpeedMs(): number {
  let fastest = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 3; run++) {
    const start = performance.now();
    let x = 0;
    for (let i = 0; i < 100_000_000; i++) x = (x * 31 + i) | 0;
    fastest = Math.min(fastest, performance.now() - start);
    if (x === 0.5) fastest = 0; // never: keeps the loop from being optimised away
  }
  return fastest;
}
