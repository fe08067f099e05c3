import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { capPerDocument, spreadPerDocument } from "../../server/search/query";

// The per-document rules every ranking shares (the engines apply the same in SQL; see sqlite-fts-index.test.ts).
const rows = ["a1", "a2", "a3", "b1", "a4", "c1", "b2", "b3", "b4"];
const documentOf = (row: string) => row[0];

describe("per-document rules of a page of chunks", () => {
  it("spreadPerDocument moves a document's rows past the first n behind the others', keeping both sides' order and every row", () => {
    assert.deepEqual(spreadPerDocument(rows, 2, documentOf), ["a1", "a2", "b1", "c1", "b2", "a3", "a4", "b3", "b4"]);
    assert.deepEqual(spreadPerDocument(rows, 1, documentOf), ["a1", "b1", "c1", "a2", "a3", "a4", "b2", "b3", "b4"]);
    assert.deepEqual(spreadPerDocument(rows, undefined, documentOf), rows);
    assert.deepEqual(spreadPerDocument(rows, 4, documentOf), rows);
  });

  it("capPerDocument drops a document's rows past the first n", () => {
    assert.deepEqual(capPerDocument(rows, 2, documentOf), ["a1", "a2", "b1", "c1", "b2"]);
    assert.deepEqual(capPerDocument(rows, undefined, documentOf), rows);
  });
});
