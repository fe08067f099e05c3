import { loadLibrary } from "../../server/llm/model-library";

/** `node dist/test/bench/model-library.bench.js`: library search latency over the whole shipped catalog (target < 5 ms). */
export function runModelLibraryBench(): { entries: number; p50: number; p99: number; max: number } {
  const library = loadLibrary(null);
  const queries = ["lama", "mistrl", "qwen coder", "llama3.2", "vision", "deepsek r1", "gemma3", "embedding", "phi4 mini", "code", "", "tools thinking"];
  for (let i = 0; i < 200; i++) library.search(queries[i % queries.length], 10);
  const times: number[] = [];
  for (let i = 0; i < 5000; i++) {
    const start = process.hrtime.bigint();
    library.search(queries[i % queries.length], 10);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
  return { entries: library.size, p50: at(0.5), p99: at(0.99), max: times[times.length - 1] };
}

if (require.main === module) {
  const r = runModelLibraryBench();
  process.stdout.write(
    `model library search over ${r.entries} models: p50 ${r.p50.toFixed(3)} ms, p99 ${r.p99.toFixed(3)} ms, max ${r.max.toFixed(3)} ms (target < 5 ms) ${r.p99 < 5 ? "ok" : "MISSED"}\n`,
  );
}
