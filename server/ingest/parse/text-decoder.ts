import { TextDecoder } from "node:util";

/** Bytes that were read as UTF-8 but are not UTF-8: the text is decoded again as latin1. */
export class NotUtf8Error extends Error {
  constructor() {
    super("The text is not valid UTF-8");
    this.name = "NotUtf8Error";
  }
}

/**
 * Decodes a text file's bytes as they arrive, with the same rules as decodeText: UTF-16 when
 * the file starts with its BOM; else UTF-8 (its BOM dropped), and write()/end() throw
 * NotUtf8Error at the first byte that is not, so the caller can start over with `latin1`.
 * A character cut between two pieces comes out whole with the later piece.
 */
export class TextStreamDecoder {
  private decoder: TextDecoder | null = null;
  /** The first byte, held until the second shows whether the two are a UTF-16 BOM. */
  private head: Uint8Array | null = null;

  constructor(private readonly latin1 = false) {}

  write(bytes: Uint8Array): string {
    if (!this.decoder) {
      const start = this.head ? concat(this.head, bytes) : bytes;
      if (start.length < 2) {
        this.head = start;
        return "";
      }
      this.head = null;
      this.decoder = this.pick(start);
      return this.decode(start, true);
    }
    return this.decode(bytes, true);
  }

  /** Whatever the last piece left unfinished. */
  end(): string {
    if (!this.decoder) {
      const start = this.head ?? new Uint8Array(0);
      this.head = null;
      this.decoder = this.pick(start);
      return this.decode(start, false);
    }
    return this.decode(new Uint8Array(0), false);
  }

  private pick(start: Uint8Array): TextDecoder {
    if (this.latin1) return new TextDecoder("latin1");
    if (start[0] === 0xff && start[1] === 0xfe) return new TextDecoder("utf-16le");
    if (start[0] === 0xfe && start[1] === 0xff) return new TextDecoder("utf-16be");
    return new TextDecoder("utf-8", { fatal: true }); // drops a UTF-8 BOM
  }

  private decode(bytes: Uint8Array, stream: boolean): string {
    try {
      return this.decoder!.decode(bytes, { stream });
    } catch (error) {
      // Only the fatal UTF-8 decoder throws, and only for bytes that are not UTF-8.
      if (error instanceof TypeError) throw new NotUtf8Error();
      throw error;
    }
  }
}

/** How much of a file looksLikeText reads (git's rule for telling text from binary reads 8,000 bytes). */
const SNIFF_BYTES = 8000;

/**
 * Whether bytes are text rather than a binary format: a UTF-16 BOM, or no NUL byte among the
 * first SNIFF_BYTES (binary formats have NULs early: a compound file's header has dozens; text in
 * UTF-8 or a legacy 8-bit encoding has none), and not empty.
 */
export function looksLikeText(bytes: Uint8Array): boolean {
  if (bytes.length === 0) return false;
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) return true;
  return bytes.subarray(0, SNIFF_BYTES).indexOf(0) === -1;
}

/** UTF-8 (or UTF-16 with a BOM) without the BOM; bytes that are not valid UTF-8 are read as latin1. */
export function decodeText(bytes: Uint8Array): string {
  try {
    return decodeWhole(bytes, false);
  } catch (error) {
    if (!(error instanceof NotUtf8Error)) throw error;
    return decodeWhole(bytes, true);
  }
}

function decodeWhole(bytes: Uint8Array, latin1: boolean): string {
  const decoder = new TextStreamDecoder(latin1);
  return decoder.write(bytes) + decoder.end();
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
