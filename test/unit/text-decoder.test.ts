import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decodeText, NotUtf8Error, TextStreamDecoder } from "../../server/ingest/parse/text-decoder";

/** Decodes `bytes` fed in pieces cut at `cuts`. */
function decodePieces(bytes: Uint8Array, cuts: number[], latin1 = false): string {
  const decoder = new TextStreamDecoder(latin1);
  let text = "";
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    text += decoder.write(bytes.subarray(from, cut));
    from = cut;
  }
  return text + decoder.end();
}

const sample = "Ünïcödé naïve café, 日本語 and 😀 emoji\r\nline two";

describe("TextStreamDecoder", () => {
  it("decodes UTF-8 cut inside any character as the whole bytes decode", () => {
    const bytes = Buffer.from(sample, "utf8");
    for (let cut = 0; cut <= bytes.length; cut++) assert.equal(decodePieces(bytes, [cut]), sample, `cut at byte ${cut}`);
    assert.equal(decodePieces(bytes, Array.from({ length: bytes.length }, (_, i) => i)), sample, "one byte at a time");
  });

  it("drops a UTF-8 BOM and follows a UTF-16 BOM, even when the BOM itself is cut", () => {
    const utf8 = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(sample, "utf8")]);
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(sample, "utf16le")]);
    const be = Buffer.from(le);
    be.swap16();
    for (const bytes of [utf8, le, be]) {
      assert.equal(decodeText(bytes), sample);
      for (const cuts of [[1], [1, 2, 3], [5], Array.from({ length: bytes.length }, (_, i) => i)]) {
        assert.equal(decodePieces(bytes, cuts), sample, `bytes ${bytes.subarray(0, 2).toString("hex")} cut at ${cuts.slice(0, 3)}`);
      }
    }
  });

  it("throws NotUtf8Error at bytes that are not UTF-8, mid-stream or at the end; latin1 then reads them as decodeText does", () => {
    const latin1 = Buffer.from("caf\xe9 cr\xe8me", "latin1");
    assert.throws(() => new TextStreamDecoder().write(latin1), NotUtf8Error);
    const truncated = Buffer.from("ok \xe6\x97", "latin1"); // the first two bytes of a three-byte character
    const decoder = new TextStreamDecoder();
    assert.equal(decoder.write(truncated), "ok ");
    assert.throws(() => decoder.end(), NotUtf8Error);
    assert.equal(decodeText(latin1), "café crème");
    assert.equal(decodePieces(latin1, [1, 4, 5], true), decodeText(latin1));
    assert.equal(decodePieces(truncated, [4], true), decodeText(truncated));
  });

  it("decodes an empty or one-byte file", () => {
    assert.equal(decodePieces(new Uint8Array(0), []), "");
    assert.equal(decodePieces(Buffer.from("a"), []), "a");
    assert.equal(decodeText(Buffer.from([0xff])), "ÿ");
  });
});
