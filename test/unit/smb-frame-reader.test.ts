import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Smb2FrameReader } from "../../server/connectors/smb/smb2-frame-reader";

/** A direct-TCP frame: zero byte, 24-bit length, body. */
function wire(body: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
}

function body(len: number, seed: number): Buffer {
  const b = Buffer.alloc(len);
  for (let i = 0; i < len; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

/** Feeds `stream` through one reused buffer of `size` bytes, as the socket's onread does. */
function feed(reader: Smb2FrameReader, stream: Buffer, size: number): void {
  const reused = Buffer.alloc(size);
  for (let pos = 0; pos < stream.length; pos += size) {
    const n = stream.copy(reused, 0, pos, pos + size);
    reader.push(reused.subarray(0, n));
    reused.fill(0xee); // the socket overwrites it with the next read
  }
}

describe("Smb2FrameReader", () => {
  const bodies = [body(100, 1), body(70_000, 2), body(5, 3), body(1_048_656, 4), body(4096, 5)];
  const stream = Buffer.concat(bodies.map(wire));

  for (const size of [1, 3, 7, 4096, 65536, stream.length]) {
    test(`frames come out whole and intact when the wire is read ${size} bytes at a time into a reused buffer`, () => {
      const got: Buffer[] = [];
      const reader = new Smb2FrameReader(16 * 2 ** 20, (f) => got.push(f), () => assert.fail("not malformed"));
      // Byte-at-a-time reads stop partway through the 1 MB frame (a half-read frame stays in).
      const tiny = size < 10;
      feed(reader, tiny ? stream.subarray(0, 300_000) : stream, size);
      const expected = tiny ? bodies.slice(0, 3) : bodies;
      assert.equal(got.length, expected.length);
      for (const [i, f] of got.entries()) assert.ok(f.equals(expected[i]), `frame ${i}`);
    });
  }

  test("a large frame is its own exact-size ArrayBuffer, so a view of it holds nothing else", () => {
    const got: Buffer[] = [];
    const reader = new Smb2FrameReader(16 * 2 ** 20, (f) => got.push(f), () => assert.fail("not malformed"));
    feed(reader, stream, 65536);
    const big = got[3];
    assert.equal(big.byteOffset, 0);
    assert.equal(big.buffer.byteLength, 1_048_656);
    assert.equal(got[4].buffer.byteLength, 4096);
  });

  test("a frame that is not direct TCP, or too long, is malformed and nothing more is delivered", () => {
    for (const bad of [Buffer.from([1, 0, 0, 4, 1, 2, 3, 4]), wire(body(2000, 1))]) {
      const got: Buffer[] = [];
      let malformed = 0;
      const reader = new Smb2FrameReader(1000, (f) => got.push(f), () => malformed++);
      reader.push(bad);
      reader.push(wire(body(10, 1)));
      assert.equal(malformed, 1);
      assert.equal(got.length, 0);
    }
  });

  test("after stop, nothing half-read or pushed later comes out", () => {
    const got: Buffer[] = [];
    const reader = new Smb2FrameReader(16 * 2 ** 20, (f) => got.push(f), () => assert.fail("not malformed"));
    const frame = wire(body(500, 9));
    reader.push(frame.subarray(0, 200));
    reader.stop();
    reader.push(frame.subarray(200));
    reader.push(frame);
    assert.equal(got.length, 0);
  });
});
