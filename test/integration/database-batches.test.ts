import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { FolderConnector } from "../../server/connectors/folder/folder.connector";
import { databaseOnThisMachine } from "../../server/data/database-host";
import { databaseBatches, PARALLEL_BATCHES, type BatchPolicy } from "../../server/ingest/batched-index-writer";
import { JobCounters } from "../../server/ingest/job-counters";
import { ParserPool } from "../../server/ingest/parse/parser-pool";
import { syncSource } from "../../server/ingest/sync-source";
import type { DocumentInput } from "../../server/search/search-index";
import { SqliteFtsIndex } from "../../server/search/sqlite";
import { WAIT_LIMIT_MS } from "../fixtures/wait-for";

class Counters extends JobCounters {
  constructor() {
    super(0);
  }
  protected async persist(): Promise<void> {}
}

describe("how many index writes a job on a database keeps in flight", () => {
  it("one when the database shares a machine of 2 cores or fewer, else two", () => {
    assert.equal(databaseBatches(2, true).writesInFlight, 1);
    assert.equal(databaseBatches(1, true).writesInFlight, 1);
    assert.equal(databaseBatches(3, true).writesInFlight, 2);
    assert.equal(databaseBatches(2, false).writesInFlight, 2);
    assert.equal(databaseBatches(16, false).writesInFlight, 2);
    // Only the number in flight changes: batch sizes stay PARALLEL_BATCHES'.
    assert.deepEqual({ ...databaseBatches(2, true), writesInFlight: 2 }, PARALLEL_BATCHES);
  });

  it("tells a database on this machine from one elsewhere, as node-postgres would connect", () => {
    const here = [
      "postgres://sluice:pw@127.0.0.1:5432/sluice",
      "postgresql://sluice@localhost/sluice",
      "postgres://sluice@[::1]:5433/sluice",
      "postgres://sluice@/sluice?host=/var/run/postgresql", // a Unix socket
      `postgres://sluice@${os.hostname()}/sluice`,
      "postgresql:///sluice", // no host: PGHOST, else localhost
    ];
    for (const url of here) assert.equal(databaseOnThisMachine(url, {}), true, url);
    const elsewhere = ["postgres://sluice@db.example.org/sluice", "postgres://sluice@192.0.2.10:5432/sluice", "postgres://sluice@localhost/sluice?host=db.example.org"];
    for (const url of elsewhere) assert.equal(databaseOnThisMachine(url, {}), false, url);
    assert.equal(databaseOnThisMachine("postgresql:///sluice", { PGHOST: "db.example.org" }), false, "PGHOST names the host when the URL has none");
    assert.equal(databaseOnThisMachine("postgresql:///sluice", { PGHOST: "/run/postgresql" }), true);
  });

  describe("a job's writes follow the policy it is given (real folder, parser thread and SQLite index)", () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "sluice-db-batches-")));
    const share = path.join(dir, "share");
    fs.mkdirSync(share);
    for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(share, `note-${i}.txt`), `Note ${i} says otters${i} float on their backs.`);
    const index = new SqliteFtsIndex({ dir: path.join(dir, "indexes") });
    const parsers = new ParserPool({ size: 1 });
    after(async () => {
      await parsers.close();
      await index.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    /** Runs the job with `batching`; the most writes that were under way at once. */
    async function mostWritesAtOnce(batching: BatchPolicy): Promise<number> {
      let writing = 0;
      let most = 0;
      const observed = Object.create(index) as SqliteFtsIndex;
      let letGo: (() => void) | null = null;
      observed.upsertDocuments = async (id: string, docs: DocumentInput[]) => {
        writing++;
        most = Math.max(most, writing);
        // A slow database: a write lasts until a second one starts beside it (the policy let the
        // job send its next batch). Where two are allowed the second must come, however slow the
        // machine (the limit only bounds a hang); where one is, a second bounds the wait, so a
        // busy machine can only make the check weaker, never fail it.
        if (writing > 1) letGo?.();
        else
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, batching.writesInFlight > 1 ? WAIT_LIMIT_MS : 1000);
            letGo = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        try {
          return await index.upsertDocuments(id, docs);
        } finally {
          writing--;
        }
      };
      const collectionId = randomUUID();
      const progress = new Counters();
      await syncSource({ index: observed, parsers, disk: null, batching }, new FolderConnector(share, { roots: [dir], dataDir: path.join(dir, "data"), dotfiles: "skip" }), "source-1", collectionId, progress, new AbortController().signal);
      assert.equal(progress.filesAdded, 200);
      assert.equal((await index.search(collectionId, "otters199", 5))[0]?.path, "note-199.txt");
      return most;
    }

    it("one write at a time on a small machine sharing the database, two otherwise", async () => {
      assert.equal(await mostWritesAtOnce(databaseBatches(2, true)), 1);
      assert.equal(await mostWritesAtOnce(databaseBatches(2, false)), 2);
    });
  });
});
