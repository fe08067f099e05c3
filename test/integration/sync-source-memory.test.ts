import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { getEventListeners } from "node:events";
import { after, describe, it } from "node:test";
import { FolderConnector } from "../../server/connectors/folder/folder.connector";
import { JobCounters } from "../../server/ingest/job-counters";
import { ParserPool } from "../../server/ingest/parse/parser-pool";
import { syncSource } from "../../server/ingest/sync-source";
import { SqliteFtsIndex } from "../../server/search/sqlite";

class Counters extends JobCounters {
  constructor() {
    super(0);
  }
  protected async persist(): Promise<void> {}
}

/** A folder for a share, a real SQLite index and one parser thread, all gone after the suite. */
function jobParts(prefix: string) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  const share = path.join(dir, "share");
  fs.mkdirSync(share, { recursive: true });
  const index = new SqliteFtsIndex({ dir: path.join(dir, "indexes") });
  const pool = new ParserPool({ size: 1 });
  after(async () => {
    await pool.close();
    await index.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const connector = () => new FolderConnector(share, { roots: [dir], dataDir: path.join(dir, "data"), dotfiles: "skip" });
  return { share, index, pool, connector };
}

describe("a job holds no file's bytes once the file is parsed (real folder, real parser threads, real SQLite index)", () => {
  const { share, index, pool, connector } = jobParts("sluice-sync-memory-");
  for (const folder of ["a", "b"]) fs.mkdirSync(path.join(share, folder), { recursive: true });
  for (let i = 0; i < 60; i++) fs.writeFileSync(path.join(share, i % 2 ? "a" : "b", `note-${i}.txt`), `Note ${i} says otters${i} float on their backs.`);
  // Read in several chunks (Node's file streams read 64 KB at a time): the job joins them into one buffer of its own.
  fs.writeFileSync(path.join(share, "long.txt"), `${"Herons stand still in the shallows. ".repeat(6000)}The last word is kingfisher.`);

  it("every buffer handed to the parser is empty afterwards, those parsed in a batch too (kept until then for a retry), and the text is whole", async () => {
    const handed: Uint8Array[] = [];
    const parsers = {
      parse: (fileName: string, bytes: Uint8Array) => {
        handed.push(bytes);
        return pool.parse(fileName, bytes);
      },
    };
    const collectionId = randomUUID();
    const progress = new Counters();
    await syncSource({ index, parsers, disk: null }, connector(), "source-1", collectionId, progress, new AbortController().signal);
    assert.equal(progress.filesAdded, 61);
    assert.equal(handed.length, 61);
    // Batches happened (one parser, 32 files in flight): their files went as copies, the originals stayed here until parsed.
    assert.ok(pool.messagesSent < handed.length, `${pool.messagesSent} messages for ${handed.length} files`);
    assert.deepEqual(
      handed.filter((bytes) => bytes.byteLength > 0).map((bytes) => bytes.byteLength),
      [],
    );
    assert.equal((await index.search(collectionId, "kingfisher", 5))[0]?.path, "long.txt");
    assert.equal((await index.search(collectionId, "otters41", 5))[0]?.path, "a/note-41.txt");
  });
});

describe("a job's files in flight wait on its signal without a leak warning (real folder, real parser threads, real SQLite index)", () => {
  const { share, index, pool, connector } = jobParts("sluice-sync-signal-");
  for (let i = 0; i < 80; i++) fs.writeFileSync(path.join(share, `note-${i}.txt`), `Note ${i} says beavers${i} build dams.`);

  it("more than Node's default 10 parses on one job's signal at once print no MaxListenersExceededWarning, and each lets go of it after", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on("warning", onWarning);
    const job = new AbortController();
    let mostAtOnce = 0;
    let inFlight = 0;
    const parsers = {
      parse: async (fileName: string, bytes: Uint8Array, onProgress?: (text: string) => void, signal?: AbortSignal) => {
        mostAtOnce = Math.max(mostAtOnce, ++inFlight);
        try {
          return await pool.parse(fileName, bytes, onProgress, signal);
        } finally {
          inFlight--;
        }
      },
    };
    try {
      const progress = new Counters();
      await syncSource({ index, parsers, disk: null }, connector(), "source-1", randomUUID(), progress, job.signal);
      // A warning is emitted on a later tick than the listener that set it off.
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(progress.filesAdded, 80);
      assert.ok(mostAtOnce > 10, `${mostAtOnce} parses at once: the case needs more than Node's default 10`);
      assert.deepEqual(warnings, []);
      assert.equal(getEventListeners(job.signal, "abort").length, 0, "every parse let go of the job's signal");
    } finally {
      process.off("warning", onWarning);
    }
  });
});
