import { test } from "node:test";
import assert from "node:assert/strict";
import { parseBatch } from "../../server/ingest/parse/parse-batch";

/** A file's bytes in a buffer of their own, as the parser pool sends them. */
const ownBuffer = (text: string) => new Uint8Array(Buffer.from(text)).slice();

test("a batch's files are parsed in order and each file's bytes are released once parsed, failed ones too", async () => {
  const good = ownBuffer("The harbour manual: check the mooring lines before the tide turns.");
  const bad = ownBuffer("%PDF-1.7 not really a pdf");
  const outcomes = await parseBatch([
    { fileName: "manual.txt", bytes: good },
    { fileName: "broken.pdf", bytes: bad },
  ]);
  assert.equal(outcomes.length, 2);
  assert.ok(outcomes[0].ok && outcomes[0].result.kind === "indexed");
  if (outcomes[0].ok && outcomes[0].result.kind === "indexed") assert.match(outcomes[0].result.chunks[0].text, /mooring lines/);
  assert.equal(outcomes[1].ok, false);
  // Detached: the memory went with the parse, not at the thread's next full collection.
  assert.equal(good.byteLength, 0);
  assert.equal(bad.byteLength, 0);
});

test("a view of a bigger buffer is left alone (something else may be reading that memory)", async () => {
  const shared = Buffer.from("first file; second file");
  const view = shared.subarray(0, 10);
  const [outcome] = await parseBatch([{ fileName: "first.txt", bytes: view }]);
  assert.ok(outcome.ok);
  assert.equal(view.byteLength, 10);
  assert.equal(shared.toString(), "first file; second file");
});
