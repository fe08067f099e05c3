import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import type { ParserCalls } from "../../server/ingest/parse/parse.worker";
import { INDEX_ERROR_KINDS, IndexDamagedError } from "../../server/search/index-damage";
import type { IndexReaderPool } from "../../server/search/index-reader-pool";
import type { IndexWriterJobCalls } from "../../server/search/index-writer.worker";
import type { CallReply } from "../../server/threads/pending-calls";
import { Caller, methodsOf, serve } from "../../server/threads/rpc";

// One request/reply shape between threads (threads/rpc.ts), here over a channel within this thread.

interface Counter {
  add(by: number): number;
  total(): Promise<number>;
  fail(code: string): Promise<void>;
  /** Answers on the port it was given. */
  echoOn(port: MessagePort, text: string): void;
  /** The byte length of what arrived, and whether the sender still has it. */
  size(bytes: Uint8Array): number;
}

class CounterThread implements Counter {
  sum = 0;
  add(by: number): number {
    this.sum += by;
    return this.sum;
  }
  async total(): Promise<number> {
    return this.sum;
  }
  async fail(code: string): Promise<void> {
    throw code === "SLUICE_INDEX_DAMAGED" ? new IndexDamagedError() : Object.assign(new Error("database or disk is full"), { code });
  }
  echoOn(port: MessagePort, text: string): void {
    port.postMessage(text);
    port.close();
  }
  size(bytes: Uint8Array): number {
    return bytes.byteLength;
  }
}

function channel(): { caller: Caller<Counter>; served: CounterThread; close(): void } {
  const { port1, port2 } = new MessageChannel();
  const served = new CounterThread();
  serve<Counter>(port2, served);
  const caller = new Caller<Counter>((message, transfer) => port1.postMessage(message, transfer), INDEX_ERROR_KINDS);
  port1.on("message", (reply: CallReply) => void caller.settle(reply));
  return { caller, served, close: () => port1.close() };
}

describe("typed calls between threads", () => {
  it("answers each call with its own result, in the method's type; a note gets none", async () => {
    const { caller, served, close } = channel();
    try {
      const sums = await Promise.all([caller.call("add", 2), caller.call("add", 3)]);
      assert.deepEqual(sums, [2, 5]);
      caller.note("add", 10);
      const total: number = await caller.call("total");
      assert.equal(total, 15, "the note ran, in order, before the next call");
      assert.equal(served.sum, 15);
    } finally {
      close();
    }
  });

  it("rejects with the error's class where the caller tests it, or its code", async () => {
    const { caller, close } = channel();
    try {
      await assert.rejects(caller.call("fail", "SLUICE_INDEX_DAMAGED"), (error: unknown) => error instanceof IndexDamagedError);
      await assert.rejects(caller.call("fail", "SQLITE_FULL"), (error: unknown) => (error as { code?: string }).code === "SQLITE_FULL" && (error as Error).message === "database or disk is full");
    } finally {
      close();
    }
  });

  it("moves what is in the transfer list (buffers, ports) instead of copying it", async () => {
    const { caller, close } = channel();
    try {
      const bytes = new TextEncoder().encode("moved, not copied");
      assert.equal(await caller.callWith(undefined, [bytes.buffer], "size", [bytes]), 17);
      assert.equal(bytes.byteLength, 0, "the sender's view is detached");

      const { port1, port2 } = new MessageChannel();
      const echoed = new Promise((resolve) => port1.once("message", resolve));
      caller.noteWith([port2], "echoOn", [port2, "over the port it was given"]);
      assert.equal(await echoed, "over the port it was given");
      port1.close();
    } finally {
      close();
    }
  });

  it("fails what still waits when the other thread is gone", async () => {
    const caller = new Caller<Counter>(() => undefined);
    const waiting = caller.call("total");
    caller.failAll(new Error("The thread stopped"));
    await assert.rejects(waiting, /The thread stopped/);
  });

  it("answers only the methods a thread picked out of its object", () => {
    const served = new CounterThread();
    const picked = methodsOf(served, ["add"]);
    assert.deepEqual(Object.keys(picked), ["add"]);
    assert.equal(picked.add(4), 4);
    assert.equal(served.sum, 4, "bound to the object");
  });
});

/** Never run: what TypeScript refuses (npm run typecheck fails if any of these lines compiles). */
function refusedByTypeScript(writer: Caller<IndexWriterJobCalls>, parser: Caller<ParserCalls>, readers: IndexReaderPool): void {
  const id = "00000000-0000-4000-8000-000000000000";
  // @ts-expect-error a method the writer's job channel does not have
  void writer.call("upsertDocumnts", id, []);
  // @ts-expect-error a job's channel cannot close the writer's connections
  void writer.call("close");
  // @ts-expect-error removeDocuments takes the paths as an array
  void writer.call("removeDocuments", id, "source-1", "a.txt");
  // @ts-expect-error the result is a map of paths, not a number
  void writer.call("indexedState", id, "source-1").then((state: number) => state);
  // @ts-expect-error a parser takes files, not names
  void parser.call("parse", "a.txt");
  // @ts-expect-error a check is not a pooled search
  void readers.run("check", id);
  // @ts-expect-error topK is a number
  void readers.run("search", id, "otters", "5");
}
void refusedByTypeScript;
