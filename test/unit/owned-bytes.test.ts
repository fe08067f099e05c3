import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ownedCopy, releaseBytes, spansItsBuffer } from "../../server/connectors/owned-bytes";

const arrayBuffers = () => process.memoryUsage().arrayBuffers;

describe("a file's bytes of their own, freed when done (owned-bytes.ts)", () => {
  it("ownedCopy joins the chunks into one buffer of exactly their size, never a slice of Node's shared pool", () => {
    const chunks = [Buffer.from("abc"), Buffer.from("defg")];
    const whole = ownedCopy(chunks, 7);
    assert.equal(whole.toString(), "abcdefg");
    assert.equal(whole.buffer.byteLength, 7);
    assert.ok(spansItsBuffer(whole));
    // Node's pool is where a small Buffer.from lives: the copy is not.
    assert.ok(!spansItsBuffer(Buffer.from("abc")));
  });

  it("releaseBytes empties a buffer of its own and its memory is gone at once, without waiting for a collection", () => {
    const bytes = Buffer.allocUnsafeSlow(8 * 1024 * 1024);
    const before = arrayBuffers();
    releaseBytes(bytes);
    assert.equal(bytes.length, 0);
    assert.ok(before - arrayBuffers() >= 8 * 1024 * 1024, `arrayBuffers went from ${before} to ${arrayBuffers()}`);
  });

  it("leaves alone what it cannot know is the caller's alone: a view of part of a buffer, a slice of Node's pool", () => {
    const whole = Buffer.allocUnsafeSlow(1024).fill(7);
    const part = whole.subarray(10, 20);
    releaseBytes(part);
    assert.equal(part.length, 10);
    assert.equal(whole.length, 1024);
    const pooled = Buffer.from("still here");
    releaseBytes(pooled);
    assert.equal(pooled.toString(), "still here");
  });
});
