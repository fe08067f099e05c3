import fs from "node:fs";
import { startSamba } from "../fixtures/samba";
import { startSluice, tempDir } from "../fixtures/sluice-server";
import { postgresBinDir, startPostgres, type PostgresCluster } from "../fixtures/postgres";
import { addSmbSource, client, createGroup, signUp } from "../fixtures/http-client";
import { writeCorpus } from "./corpus";
import { peakRssMb, runWatched, verdict } from "./measure";
import { runSearchBench } from "./search.bench";

/**
 * `npm run bench -- --growth`: how cost grows (issue 18, item 4). A 2,000-file and a
 * 20,000-file corpus, each ingested by a fresh server per back end: full ingestion, the
 * no-change re-run (goals: < 0.2 s and < 3 s) and the server's peak RSS (the 20,000-file run
 * no higher than the 2,000-file one, ± 10 %); then search p95 at 100,000 and 1,000,000
 * synthetic chunks (goals at 1,000,000: < 15 ms SQLite, < 50 ms PostgreSQL). One table per
 * measure, a row per size, so the growth shows. Takes long: opt-in only. `--sizes 2000,10000`
 * ingests other corpus sizes (the first is the base the peak RSS is compared with) and
 * `--no-search` leaves the search part out, for a shorter run.
 */

const SIZES = [2_000, 20_000];
/** The no-change re-run goals: < 0.2 s at 2,000 files, < 3 s at 20,000 (a size in between is held to the 20,000-file goal). */
const rerunGoalS = (files: number) => (files <= 2_000 ? 0.2 : 3);
const SEARCH_SIZES = [100_000, 1_000_000];
const SEARCH_GOAL_MS = { SQLite: 15, PostgreSQL: 50 } as const;

interface SizeFigures {
  files: number;
  ingestS: number;
  rerunS: number;
  rssMb: number;
}

async function ingestSize(corpusDir: string, databaseUrl: string | null): Promise<SizeFigures> {
  const samba = await startSamba({ extraShares: { corpus: corpusDir } });
  const server = await startSluice({ env: { SMB_TIMEOUT_MS: "15000", ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) } });
  try {
    const request = client(server.api);
    const user = await signUp(request, "growth");
    const group = await createGroup(request, user.token, "growth");
    const { pipeline } = await addSmbSource(request, user.token, group, samba, "Growth corpus");
    const full = await runWatched(request, user.token, pipeline.id, { everyMs: 100 });
    if (full.job.status !== "completed") throw new Error(`ingestion failed: ${JSON.stringify(full.job)}`);
    const rssMb = peakRssMb(server.child.pid!);
    const rerun = await runWatched(request, user.token, pipeline.id, { everyMs: 10 });
    return { files: full.job.entities_discovered, ingestS: full.seconds, rerunS: rerun.seconds, rssMb };
  } finally {
    await server.stop();
    await samba.stop();
  }
}

export async function runGrowthBench({ scale, sizes = SIZES, search = true }: { scale: number; sizes?: number[]; search?: boolean }): Promise<void> {
  const backEnds: Array<["SQLite" | "PostgreSQL", (() => Promise<string>) | null]> = [["SQLite", null]];
  let postgres: PostgresCluster | null = null;
  if (postgresBinDir()) {
    postgres = await startPostgres();
    const cluster = postgres;
    backEnds.push(["PostgreSQL", () => cluster.createDatabase()]);
  }
  try {
    const figures = new Map<string, SizeFigures[]>();
    for (const size of sizes) {
      const textFiles = Math.max(10, Math.round(size * scale));
      const dir = tempDir("sluice-growth-");
      fs.chmodSync(dir, 0o755);
      process.stdout.write(`writing a ${textFiles}-file corpus...\n`);
      await writeCorpus(dir, { textFiles, binaryFiles: Math.max(2, Math.round(textFiles / 100)) });
      try {
        for (const [name, database] of backEnds) {
          process.stdout.write(`${name}: ingesting it...\n`);
          const f = await ingestSize(dir, database ? await database() : null);
          figures.set(name, [...(figures.get(name) ?? []), f]);
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }

    for (const [name, rows] of figures) {
      const base = rows[0].rssMb;
      process.stdout.write(`\n| ${name}: files | full ingestion | no-change re-run | peak RSS |\n|---|---|---|---|\n`);
      rows.forEach((f, i) => {
        const goal = rerunGoalS(sizes[i]);
        const rssNote = i === 0 ? "" : ` (${((f.rssMb / base - 1) * 100).toFixed(0)} % vs ${rows[0].files} files; target within +10 %: ${verdict(f.rssMb <= base * 1.1)})`;
        process.stdout.write(
          `| ${f.files} | ${f.ingestS.toFixed(1)} s, ${(f.files / f.ingestS).toFixed(0)} files/s | ${f.rerunS.toFixed(2)} s (target < ${goal} s: ${verdict(f.rerunS < goal)}) | ${f.rssMb.toFixed(0)} MB${rssNote} |\n`,
        );
      });
    }
  } finally {
    await postgres?.stop();
  }
  if (!search) return;

  const searchRows: string[] = [];
  for (const [name] of backEnds) {
    const cells: string[] = [];
    for (const n of SEARCH_SIZES) {
      const chunks = Math.max(1000, Math.round(n * scale));
      process.stdout.write(`${name}: search over ${chunks} synthetic chunks...\n`);
      const r = await runSearchBench({ chunks, queries: 1000, engine: name === "PostgreSQL" ? "postgres" : "sqlite" });
      const goal = n === 1_000_000 ? ` (target < ${SEARCH_GOAL_MS[name]} ms: ${verdict(r.p95 < SEARCH_GOAL_MS[name])})` : "";
      cells.push(`p95 ${r.p95.toFixed(2)} ms${goal}`);
    }
    searchRows.push(`| ${name} | ${cells.join(" | ")} |`);
  }
  process.stdout.write(`\n| search, synthetic chunks | ${SEARCH_SIZES.map((n) => Math.max(1000, Math.round(n * scale))).join(" | ")} |\n|---|${SEARCH_SIZES.map(() => "---|").join("")}\n`);
  process.stdout.write(`${searchRows.join("\n")}\n`);
}
