import type { ChildProcess } from "node:child_process";
import fs from "node:fs";

/**
 * A child process's time limit that a busy machine does not trip (docs/decisions/0496-ocr-page-
 * limit-in-cpu-time.md): on Linux the CPU time the child used (utime + stime of /proc/<pid>/stat)
 * is held against `cpuMs`, and the wall clock only against `wallMs`, a much larger backstop for
 * a child that is stuck without using any CPU; elsewhere the wall clock against `cpuMs`, as
 * before. Past either the child is killed and `onExceeded` says which. While the child is within
 * its limits `onAlive` is called at each look (once a second).
 */
export interface ChildLimits {
  cpuMs: number;
  wallMs: number;
  onAlive?: () => void;
  onExceeded: (reason: string) => void;
}

/** How often the child's CPU time is read: a page takes seconds, a limit minutes. */
const LOOK_EVERY_MS = 1_000;
/** /proc/<pid>/stat counts in USER_HZ, which Linux fixes at 100 for every architecture's user-space ABI. */
const TICKS_PER_SECOND = 100;

/** CPU milliseconds a process has used, or null where /proc does not say (not Linux, or it has gone). */
export function cpuMsOf(pid: number): number | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // The command's name (field 2) is in parentheses and may hold spaces: fields are counted after its last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? ((utime + stime) * 1000) / TICKS_PER_SECOND : null;
}

/** Watches `child` until it exits; returns the function that stops watching. */
export function limitChild(child: ChildProcess, limits: ChildLimits): () => void {
  const started = performance.now();
  const byCpu = child.pid !== undefined && cpuMsOf(child.pid) !== null;
  const kill = (reason: string) => {
    stop();
    child.kill("SIGKILL");
    limits.onExceeded(reason);
  };
  const look = () => {
    const wall = performance.now() - started;
    if (!byCpu) {
      if (wall > limits.cpuMs) return kill(`${seconds(limits.cpuMs)} s`);
    } else {
      const cpu = cpuMsOf(child.pid!);
      if (cpu === null) return; // it has just exited: its close event follows
      if (cpu > limits.cpuMs) return kill(`${seconds(limits.cpuMs)} s of CPU time`);
      if (wall > limits.wallMs) return kill(`${seconds(limits.wallMs)} s (it used ${seconds(cpu)} s of CPU)`);
    }
    limits.onAlive?.();
  };
  const timer = setInterval(look, Math.min(LOOK_EVERY_MS, Math.max(10, limits.cpuMs / 4)));
  timer.unref(); // the child's pipes keep the thread alive while it runs; the watch must not after
  const stop = () => clearInterval(timer);
  child.once("close", stop);
  return stop;
}

function seconds(ms: number): number {
  return Number((ms / 1000).toFixed(1));
}
