/**
 * Cuts SMB2's direct TCP byte stream (a zero byte, a 24-bit big-endian length, then the frame)
 * into frames. The socket reads into one reused buffer (net's `onread`), and each frame's bytes
 * are copied once from it into a buffer of the frame's own size, which is what the connection
 * hands on (the client copies a READ's data out of it and frees the frame at once:
 * owned-bytes.ts). Before, every socket
 * read was a fresh 64 KB buffer, `Buffer.concat` copied them into the frame and the client
 * copied the data out again, so a file's bytes existed three times and the dead read buffers
 * piled up on the job thread until V8 got round to them.
 */

/** Frames from this size up get an ArrayBuffer of their own (Node's pool would share 8 KB slabs). */
const OWN_BUFFER_FROM = 4096;

export class Smb2FrameReader {
  private readonly head = Buffer.alloc(4);
  private headFill = 0;
  private frame: Buffer | null = null;
  private fill = 0;
  private stopped = false;

  constructor(
    private readonly maxFrame: number,
    private readonly onFrame: (frame: Buffer) => void,
    private readonly onMalformed: () => void,
  ) {}

  /** Takes the next bytes off the wire; `bytes` may be overwritten as soon as this returns. */
  push(bytes: Buffer): void {
    let pos = 0;
    while (pos < bytes.length && !this.stopped) {
      if (!this.frame) {
        const take = Math.min(4 - this.headFill, bytes.length - pos);
        bytes.copy(this.head, this.headFill, pos, pos + take);
        this.headFill += take;
        pos += take;
        if (this.headFill < 4) return;
        this.headFill = 0;
        const len = this.head.readUInt32BE(0) & 0xffffff;
        if (this.head[0] !== 0 || len > this.maxFrame) {
          this.stop();
          this.onMalformed();
          return;
        }
        // Every byte is written before the frame is handed on, so uninitialised memory is fine.
        this.frame = len >= OWN_BUFFER_FROM ? Buffer.allocUnsafeSlow(len) : Buffer.allocUnsafe(len);
        this.fill = 0;
      }
      const take = Math.min(this.frame.length - this.fill, bytes.length - pos);
      bytes.copy(this.frame, this.fill, pos, pos + take);
      this.fill += take;
      pos += take;
      if (this.fill === this.frame.length) {
        const done = this.frame;
        this.frame = null;
        this.onFrame(done);
      }
    }
  }

  /** Drops whatever is half-read and ignores anything pushed later (the connection is gone). */
  stop(): void {
    this.stopped = true;
    this.frame = null;
  }
}
