import assert from "node:assert/strict";
import os from "node:os";
import { describe, it } from "node:test";
import { QueryFailedError } from "typeorm";
import { loadConfig } from "../../server/config";
import { DATABASE_CONNECTION_LOST, DatabaseConnectionLost, DatabaseOutage } from "../../server/data/database-outage";
import { isDatabaseUnreachable } from "../../server/data/db-errors";

const socketError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, syscall: "connect" });
const pgError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: "FATAL" });

describe("isDatabaseUnreachable", () => {
  it("recognises a lost or refused connection, bare or wrapped by TypeORM", () => {
    const lost = [
      socketError("ECONNREFUSED"),
      socketError("ECONNRESET"),
      pgError("57P01", "terminating connection due to administrator command"),
      pgError("57P03", "the database system is starting up"),
      pgError("08006", "connection failure"),
      new Error("Connection terminated unexpectedly"),
      new Error("timeout exceeded when trying to connect"),
      new QueryFailedError("SELECT 1", [], pgError("57P01", "terminating connection due to administrator command")),
      new QueryFailedError("SELECT 1", [], new Error("Connection terminated unexpectedly")),
    ];
    for (const error of lost) assert.ok(isDatabaseUnreachable(error), error.message);
  });

  it("leaves every other error alone", () => {
    const others = [
      pgError("23505", "duplicate key value violates unique constraint"),
      pgError("42P01", 'relation "x" does not exist'),
      new QueryFailedError("SELECT 1", [], pgError("40001", "could not serialize access")),
      new Error("SQLITE_BUSY: database is locked"),
      new Error("Not found"),
      null,
      undefined,
    ];
    for (const error of others) assert.equal(isDatabaseUnreachable(error), false, String(error?.message ?? error));
  });
});

describe("DatabaseOutage", () => {
  it("retries through an outage and answers what the work answers once the database is back", async () => {
    const notes: string[] = [];
    const outage = new DatabaseOutage(5_000, (m) => notes.push(m));
    let calls = 0;
    const value = await outage.run(async () => {
      calls += 1;
      if (calls < 3) throw socketError("ECONNREFUSED");
      return "written";
    });
    assert.equal(value, "written");
    assert.equal(calls, 3);
    assert.equal(notes.length, 2, "the outage's start and end are told once each");
    assert.match(notes[0], /unreachable/);
    assert.match(notes[1], /reachable again/);
  });

  it("fails with 'Database connection lost' once the outage outlasts the grace, and passes other errors through at once", async () => {
    const outage = new DatabaseOutage(300);
    const started = Date.now();
    await assert.rejects(
      outage.run(async () => {
        throw socketError("ECONNREFUSED");
      }),
      (error: unknown) => error instanceof DatabaseConnectionLost && (error as Error).message === DATABASE_CONNECTION_LOST,
    );
    assert.ok(Date.now() - started < 2_000, "within the grace, not after a full back-off");
    let calls = 0;
    await assert.rejects(
      new DatabaseOutage(5_000).run(async () => {
        calls += 1;
        throw new Error("duplicate key");
      }),
      /duplicate key/,
    );
    assert.equal(calls, 1);
  });

  it("untilReachable waits past the grace, and gives up only when its signal says so", async () => {
    const outage = new DatabaseOutage(0);
    let calls = 0;
    const done = await outage.untilReachable(async () => {
      calls += 1;
      if (calls < 3) throw new DatabaseConnectionLost();
      return 42;
    });
    assert.deepEqual(done, { value: 42 });
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 100);
    assert.equal(await outage.untilReachable(async () => Promise.reject(socketError("ECONNRESET")), stop.signal), null);
  });
});

describe("the outage and load settings", () => {
  it("defaults DB_OUTAGE_GRACE_S to 60 s, one search reader per core up to 4, a queue of 256", () => {
    const config = loadConfig({ HOME: "/home/u" });
    assert.equal(config.dbOutageGraceMs, 60_000);
    assert.equal(config.searchReaders, Math.max(1, Math.min(os.availableParallelism(), 4)));
    assert.equal(config.searchQueueLimit, 256);
  });

  it("reads them, and refuses values that are not whole numbers in range", () => {
    const config = loadConfig({ HOME: "/home/u", DB_OUTAGE_GRACE_S: "5", SEARCH_READERS: "3", SEARCH_QUEUE_LIMIT: "0" });
    assert.deepEqual([config.dbOutageGraceMs, config.searchReaders, config.searchQueueLimit], [5_000, 3, 0]);
    assert.throws(() => loadConfig({ DB_OUTAGE_GRACE_S: "-1" }), /DB_OUTAGE_GRACE_S must be a whole number of seconds/);
    assert.throws(() => loadConfig({ SEARCH_READERS: "0" }), /SEARCH_READERS must be an integer from 1 to 64, got "0"/);
    assert.throws(() => loadConfig({ SEARCH_QUEUE_LIMIT: "lots" }), /SEARCH_QUEUE_LIMIT must be an integer/);
  });
});
