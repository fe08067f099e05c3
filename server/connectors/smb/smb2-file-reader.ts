/** Reading a file over an SMB2 session: a paced stream of READs, or one compound round trip for a small file. */
import { Readable } from "node:stream";
import { ownedCopy, releaseBytes } from "../owned-bytes";
import { Smb2ConnectionLost } from "./smb2-connection";
import { Access, Command, CreateOptions, RELATED_FILE_ID, Smb2MalformedReply, Status, closeRequest, createRequest, parseRead, readRequest, type CreateResponse } from "./smb2-messages";
import type { Session } from "./smb2-session";

/** What reading needs from the client: operations run on a live session (reconnecting once), trees and handles on it. */
export interface SessionOps {
  run<T>(op: (s: Session) => Promise<T>): Promise<T>;
  tree(s: Session, share: string): Promise<number>;
  open(s: Session, share: string, path: string, access: number, options: number): Promise<CreateResponse & { treeId: number }>;
  closeHandle(s: Session, treeId: number, fileId: Buffer): Promise<void>;
}

/**
 * A stream of a file's bytes, read one chunk per `_read` so the consumer's
 * pace sets ours. The file is opened before this resolves, so "not found"
 * and "access denied" surface here rather than as a stream error. Reading
 * stops at the size the file had when opened.
 *
 * `expectedSize` (from a directory listing) lets a file that fits one read
 * come in one round trip: CREATE, READ and CLOSE sent as one compound request.
 */
export async function openReadStream(
  client: SessionOps,
  share: string,
  path: string,
  mapError: (e: Error) => Error,
  expectedSize?: number,
): Promise<Readable> {
  type Handle = { s: Session; treeId: number; fileId: Buffer; size: number };
  const openHandle = () =>
    client.run(async (s): Promise<Handle> => {
      const h = await client.open(s, share, path, Access.GENERIC_READ_FILE, CreateOptions.NON_DIRECTORY_FILE);
      return { s, treeId: h.treeId, fileId: h.fileId, size: h.size };
    });
  let handle: Handle | undefined;
  let offset = 0;
  // Bytes read before the stream was made, delivered first.
  let head: Buffer | null = null;
  let finished = false;
  const whole = expectedSize === undefined ? null : await client.run((s) => readIfSmall(client, s, share, path, expectedSize));
  if (whole) {
    head = whole.data;
    offset = whole.data.length;
    // A short read was the whole file; a full one means it grew since it was listed.
    finished = whole.data.length < whole.asked;
  } else {
    handle = await openHandle();
  }
  let reopened = false;
  const release = async () => {
    const h = handle;
    handle = undefined;
    if (h) await client.closeHandle(h.s, h.treeId, h.fileId);
  };
  const readChunk = async (h: Handle): Promise<Buffer | null> => {
    if (offset >= h.size) return null;
    const len = readLength(h.s);
    const r = await h.s.conn.request(Command.READ, readRequest(h.fileId, offset, len), {
      treeId: h.treeId,
      payloadSize: len,
      accept: [Status.END_OF_FILE],
    });
    if (r.header.status === Status.END_OF_FILE) return null;
    const data = ownReadData(r.message, len);
    return data.length ? data : null;
  };
  const stream: Readable = new Readable({
    highWaterMark: 1,
    read: () => {
      const go = async (): Promise<Buffer | null> => {
        if (head) {
          const first = head;
          head = null;
          if (first.length) return first;
        }
        if (finished) return null;
        for (;;) {
          // Abandoned meanwhile: don't reopen a file nobody will close.
          if (stream.destroyed) return null;
          if (!handle) handle = await openHandle();
          try {
            const chunk = await readChunk(handle);
            if (chunk) offset += chunk.length;
            else await release();
            return chunk;
          } catch (e) {
            // A dropped connection mid-file: reopen once and resume at the same offset.
            if (e instanceof Smb2ConnectionLost && !reopened) {
              reopened = true;
              handle = undefined;
              continue;
            }
            throw e;
          }
        }
      };
      go().then(
        (chunk) => stream.push(chunk),
        (err: Error) => stream.destroy(mapError(err)),
      );
    },
    destroy: (err, cb) => {
      release().then(
        () => cb(err),
        () => cb(err),
      );
    },
  });
  return stream;
}

/** How much one READ asks for: up to 1 MB where the server takes multi-credit reads, within the credits we hold. */
function readLength(s: Session): number {
  const perCredit = 65536;
  const maxChunk = s.conn.supportsMultiCredit ? Math.min(s.negotiated.maxReadSize, 1024 * 1024) : Math.min(s.negotiated.maxReadSize, perCredit);
  // Don't ask for more credits than we hold; fall back to one-credit reads.
  const byCredits = Math.max(1, s.conn.availableCredits) * perCredit;
  return Math.max(1, Math.min(maxChunk, byCredits));
}

/**
 * A file expected to fit in one READ, read with CREATE + READ + CLOSE in one round trip;
 * null when it is too big for that and should be streamed.
 */
async function readIfSmall(
  client: SessionOps,
  s: Session,
  share: string,
  path: string,
  expectedSize: number,
): Promise<{ data: Buffer; asked: number } | null> {
  const asked = readLength(s);
  if (expectedSize >= asked) return null;
  const treeId = await client.tree(s, share);
  const [, read] = await s.conn.compound(
    [
      { command: Command.CREATE, body: createRequest(path, Access.GENERIC_READ_FILE, CreateOptions.NON_DIRECTORY_FILE) },
      { command: Command.READ, body: readRequest(RELATED_FILE_ID, 0, asked), payloadSize: asked, accept: [Status.END_OF_FILE] },
      { command: Command.CLOSE, body: closeRequest(RELATED_FILE_ID) },
    ],
    treeId,
  );
  const data = read.header.status === Status.END_OF_FILE ? Buffer.alloc(0) : ownReadData(read.message, asked);
  return { data, asked };
}

/**
 * A READ reply's data as a buffer of its own, and the reply's frame freed at once (with any
 * replies compounded in it, answered by now; nothing looks at a frame once its replies are
 * taken): the caller gets chunks it may free (Connector.read), and a file's bytes do not stay
 * on as a dead frame until V8's next full collection (owned-bytes.ts). A frame in Node's shared
 * pool of small buffers (never larger than Buffer.poolSize) is left alone.
 */
function ownReadData(message: Buffer, asked: number): Buffer {
  const data = parseRead(message);
  // More than was asked for is a broken or hostile server: reads are paced by what we ask.
  if (data.length > asked) throw new Smb2MalformedReply(`READ reply (${data.length} bytes for ${asked} asked)`);
  const own = ownedCopy([data], data.length);
  if (message.buffer.byteLength > Buffer.poolSize) releaseBytes(new Uint8Array(message.buffer));
  return own;
}
