/**
 * glibc's malloc, tuned from inside the process (Linux with glibc only; elsewhere every function
 * here does nothing). Node allocates ArrayBuffers, SQLite's page caches and much of V8's own
 * bookkeeping with malloc, and glibc gives each thread that allocates at once an arena of its
 * own (up to 8 per core), while its moving mmap threshold sent ever larger buffers into them: at
 * a PDF-heavy ingestion's peak they held ~100 MB of freed memory, never returned to the OS. The
 * calls go through koffi (an FFI whose prebuilt binary comes in an npm package per platform),
 * loaded only where it is used. Measured in docs/decisions/0197-glibc-malloc-in-process.md.
 */

/** mallopt's parameter numbers (glibc's malloc.h). */
const M_TRIM_THRESHOLD = -1;
const M_MMAP_THRESHOLD = -3;
const M_ARENA_MAX = -8;

/**
 * Arenas at most, the main one included (glibc's default on 2 cores: 16). glibc creates arenas
 * only as threads first allocate, so set before the server starts its threads, the limit holds
 * for all of them; arenas made earlier (Node's own threads at start-up) stay.
 */
export const MALLOC_ARENA_MAX = 2;

/**
 * Allocations from this size up get pages of their own (mmap), returned to the OS when freed.
 * glibc starts at 128 KB but raises the threshold to the size of each larger block freed, up to
 * 32 MB: after a server has freed one 5 MB file buffer, every buffer under 5 MB came from the
 * arenas, and their freed space stayed there (100 MB of it at the PDF peak). Setting it fixes
 * it (and glibc's matching top-of-heap trim threshold, at twice it as glibc's own rule).
 */
export const MALLOC_MMAP_THRESHOLD = 256 * 1024;

/** mallinfo2's totals over all arenas, in bytes (glibc 2.33+). */
export interface MallocInfo {
  /** Non-mmapped space taken from the OS (all arenas). */
  arena: number;
  /** Space in mmapped chunks (large allocations, returned to the OS on free). */
  hblkhd: number;
  /** In use. */
  uordblks: number;
  /** Free but held in the arenas: what malloc_trim can give back (its whole pages). */
  fordblks: number;
}

interface Glibc {
  version: string;
  mallopt(param: number, value: number): number;
  mallocTrim(pad: number): number;
  mallinfo2: (() => MallocInfo) | null;
}

/** What tuneMalloc did, for the start-up log line. */
export interface MallocTuning {
  applied: boolean;
  detail: string;
}

let glibc: Glibc | null | undefined;

/** The process's own glibc (the C library Node runs on), or null: not Linux, musl, Electron, or koffi could not load. */
function loadGlibc(): Glibc | null {
  if (glibc !== undefined) return glibc;
  glibc = null;
  // Electron's processes allocate through Chromium's PartitionAlloc, not glibc's arenas.
  if (process.platform !== "linux" || process.versions.electron) return null;
  try {
    const koffi = require("koffi") as typeof import("koffi");
    const self = koffi.load(null);
    // Only glibc has gnu_get_libc_version: on musl the lookup throws, and nothing is tuned.
    const version = String(self.func("const char *gnu_get_libc_version(void)")());
    const mallopt = self.func("int mallopt(int param, int value)") as (param: number, value: number) => number;
    const mallocTrim = self.func("int malloc_trim(size_t pad)") as (pad: number) => number;
    let mallinfo2: Glibc["mallinfo2"] = null;
    try {
      const info = koffi.struct("sluice_mallinfo2", {
        arena: "size_t",
        ordblks: "size_t",
        smblks: "size_t",
        hblks: "size_t",
        hblkhd: "size_t",
        usmblks: "size_t",
        fsmblks: "size_t",
        uordblks: "size_t",
        fordblks: "size_t",
        keepcost: "size_t",
      });
      const call = self.func("mallinfo2", info, []) as () => Record<string, number | bigint>;
      mallinfo2 = () => {
        const r = call();
        return { arena: Number(r.arena), hblkhd: Number(r.hblkhd), uordblks: Number(r.uordblks), fordblks: Number(r.fordblks) };
      };
    } catch {
      // glibc before 2.33: no statistics, the rest still works
    }
    glibc = { version, mallopt, mallocTrim, mallinfo2 };
  } catch {
    glibc = null;
  }
  return glibc;
}

/**
 * Limits glibc to MALLOC_ARENA_MAX arenas and fixes its mmap threshold. Call first thing in an
 * entry point, before any worker thread starts. Elsewhere (macOS, Windows, musl, Electron) it
 * does nothing and says why.
 */
export function tuneMalloc(): MallocTuning {
  const libc = loadGlibc();
  if (!libc) return { applied: false, detail: "malloc left as is (not Node on Linux with glibc)" };
  const settings: Array<[string, number, number]> = [
    ["M_ARENA_MAX", M_ARENA_MAX, MALLOC_ARENA_MAX],
    ["M_MMAP_THRESHOLD", M_MMAP_THRESHOLD, MALLOC_MMAP_THRESHOLD],
    ["M_TRIM_THRESHOLD", M_TRIM_THRESHOLD, 2 * MALLOC_MMAP_THRESHOLD],
  ];
  for (const [name, param, value] of settings) {
    if (libc.mallopt(param, value) !== 1) return { applied: false, detail: `glibc ${libc.version} refused mallopt(${name}, ${value})` };
  }
  return { applied: true, detail: `malloc: at most ${MALLOC_ARENA_MAX} arenas, blocks from ${MALLOC_MMAP_THRESHOLD / 1024} KB mmapped (glibc ${libc.version})` };
}

/** The trims so far and what they gave back (RSS before less after), for the heap trace (diagnostics/heap-trace.ts). */
export const trimStats = { trims: 0, milliseconds: 0, releasedBytes: 0 };

/**
 * Gives the arenas' free whole pages back to the OS (malloc_trim(0), over every arena, whichever
 * thread freed them); true when some were. A no-op answering false where glibc is not the allocator.
 */
export function trimMalloc(): boolean {
  const libc = loadGlibc();
  if (!libc) return false;
  const start = performance.now();
  const rss = process.memoryUsage.rss();
  const released = libc.mallocTrim(0) === 1;
  trimStats.trims++;
  trimStats.milliseconds += performance.now() - start;
  trimStats.releasedBytes += Math.max(0, rss - process.memoryUsage.rss());
  return released;
}

/** mallinfo2's totals, or null where glibc (2.33+) is not the allocator. */
export function mallocInfo(): MallocInfo | null {
  return loadGlibc()?.mallinfo2?.() ?? null;
}
