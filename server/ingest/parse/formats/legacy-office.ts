import CFB from "cfb";
import WordExtractor from "word-extractor";
import { corruptFile, passwordProtected } from "../failures";
import { ParseError } from "../parse-types";

// Legacy (97-2003) Office files: OLE compound files ("CFB"), read with SheetJS's cfb. Word
// text comes from word-extractor; Excel and PowerPoint text from their record streams, read
// here (no maintained pure-JS reader of those exists on the registry: SheetJS's npm release
// is years old with published advisories). The title is the SummaryInformation property set's.

type Container = CFB.CFB$Container;

function openCompoundFile(bytes: Uint8Array, what: string): Container {
  if (!(bytes[0] === 0xd0 && bytes[1] === 0xcf && bytes[2] === 0x11 && bytes[3] === 0xe0)) throw corruptFile(what);
  try {
    return CFB.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { type: "buffer" });
  } catch {
    throw corruptFile(what);
  }
}

function stream(container: Container, name: string): Buffer | undefined {
  const entry = CFB.find(container, name);
  if (!entry?.content || entry.type !== 2) return undefined;
  return Buffer.isBuffer(entry.content) ? entry.content : Buffer.from(entry.content as ArrayLike<number> as Uint8Array);
}

/** An Office 2007+ file (DOCX/XLSX/PPTX) saved with a password is a compound file holding the encrypted package. */
export function isEncryptedPackage(bytes: Uint8Array): boolean {
  if (!(bytes[0] === 0xd0 && bytes[1] === 0xcf)) return false;
  try {
    const container = CFB.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { type: "buffer" });
    return CFB.find(container, "EncryptedPackage") !== null;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------- Word 97-2003

export async function docText(bytes: Uint8Array): Promise<{ title?: string; text: string }> {
  const container = openCompoundFile(bytes, "Word document");
  const word = stream(container, "WordDocument");
  if (!word || word.length < 12) throw corruptFile("Word document");
  // FIB: fEncrypted is bit 8 of the flags word at offset 10.
  if (word.readUInt16LE(10) & 0x0100) throw passwordProtected("Word document");
  let doc: Awaited<ReturnType<WordExtractor["extract"]>>;
  try {
    doc = await new WordExtractor().extract(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch {
    throw corruptFile("Word document");
  }
  const parts = [doc.getBody(), doc.getTextboxes({ includeHeadersAndFooters: false, includeBody: true }), doc.getFootnotes(), doc.getEndnotes(), doc.getAnnotations(), doc.getHeaders({ includeFooters: true })];
  return { title: summaryTitle(container), text: parts.map((p) => p.trim()).filter(Boolean).join("\n\n") };
}

// ---------------------------------------------------------------- Excel 97-2003 (BIFF8)

enum Biff {
  Bof = 0x0809,
  Eof = 0x000a,
  FilePass = 0x002f,
  BoundSheet = 0x0085,
  Sst = 0x00fc,
  Continue = 0x003c,
  LabelSst = 0x00fd,
  Label = 0x0204,
  Number = 0x0203,
  Rk = 0x027e,
  MulRk = 0x00bd,
  Formula = 0x0006,
  String = 0x0207,
}

interface BiffRecord {
  type: number;
  data: Buffer;
}

function records(data: Buffer): BiffRecord[] {
  const out: BiffRecord[] = [];
  for (let pos = 0; pos + 4 <= data.length; ) {
    const type = data.readUInt16LE(pos);
    const size = data.readUInt16LE(pos + 2);
    out.push({ type, data: data.subarray(pos + 4, pos + 4 + size) });
    pos += 4 + size;
  }
  return out;
}

/**
 * The cells of every sheet, row by row, tab-separated, under the sheet's name: strings (shared
 * and inline), numbers and formula results. Excel 97-2003 (BIFF8) only; Excel 5/95 workbooks
 * (BIFF5, a "Book" stream) get a clear refusal.
 */
export function xlsText(bytes: Uint8Array): { title?: string; text: string } {
  const container = openCompoundFile(bytes, "Excel workbook");
  const workbook = stream(container, "Workbook");
  if (!workbook) {
    if (stream(container, "Book")) throw new ParseError("Excel 5.0/95 workbook: only Excel 97 and later (.xls) are read");
    throw corruptFile("Excel workbook");
  }
  const all = records(workbook);
  if (all.some((r) => r.type === Biff.FilePass)) throw passwordProtected("Excel workbook");
  const shared: string[] = [];
  const sheetNames = new Map<number, string>(); // BOF offset of the sheet's substream -> name
  let offset = 0;
  const offsets: number[] = [];
  for (const r of all) {
    offsets.push(offset);
    offset += 4 + r.data.length;
  }
  for (let i = 0; i < all.length; i++) {
    const r = all[i];
    if (r.type === Biff.BoundSheet && r.data.length >= 8) {
      sheetNames.set(r.data.readUInt32LE(0), readShortString(r.data, 6));
    } else if (r.type === Biff.Sst) {
      const pieces = [r.data];
      for (let j = i + 1; j < all.length && all[j].type === Biff.Continue; j++) pieces.push(all[j].data);
      shared.push(...sharedStrings(pieces));
    }
  }
  const sections: string[] = [];
  let sheet: { name: string; rows: Map<number, Array<[number, string]>> } | null = null;
  let formulaCell: [number, number] | null = null;
  const put = (row: number, col: number, text: string): void => {
    if (!sheet || text === "") return;
    const cells = sheet.rows.get(row) ?? [];
    cells.push([col, text]);
    sheet.rows.set(row, cells);
  };
  for (let i = 0; i < all.length; i++) {
    const { type, data } = all[i];
    if (type === Biff.Bof && sheetNames.has(offsets[i])) {
      sheet = { name: sheetNames.get(offsets[i])!, rows: new Map() };
      continue;
    }
    if (!sheet) continue;
    if (type === Biff.Eof) {
      const rows = [...sheet.rows.entries()].sort((a, b) => a[0] - b[0]).map(([, cells]) => cells.sort((a, b) => a[0] - b[0]).map((c) => c[1]).join("\t"));
      if (rows.length > 0) sections.push(`${sheet.name}\n\n${rows.join("\n")}`);
      sheet = null;
      continue;
    }
    if (data.length < 6 && type !== Biff.String) continue;
    switch (type) {
      case Biff.LabelSst:
        put(data.readUInt16LE(0), data.readUInt16LE(2), shared[data.readUInt32LE(6)] ?? "");
        break;
      case Biff.Label:
        put(data.readUInt16LE(0), data.readUInt16LE(2), readUnicodeString(data, 6, 2).text);
        break;
      case Biff.Number:
        put(data.readUInt16LE(0), data.readUInt16LE(2), formatNumber(data.readDoubleLE(6)));
        break;
      case Biff.Rk:
        put(data.readUInt16LE(0), data.readUInt16LE(2), formatNumber(rkValue(data.readInt32LE(6))));
        break;
      case Biff.MulRk: {
        const row = data.readUInt16LE(0);
        const first = data.readUInt16LE(2);
        for (let k = 0; 4 + k * 6 + 6 <= data.length - 2; k++) put(row, first + k, formatNumber(rkValue(data.readInt32LE(4 + k * 6 + 2))));
        break;
      }
      case Biff.Formula: {
        const [row, col] = [data.readUInt16LE(0), data.readUInt16LE(2)];
        // The cached result: a number, unless its last two bytes are 0xFFFF (then byte 6 says: 0 = string in the next STRING record).
        if (data.readUInt16LE(12) !== 0xffff) put(row, col, formatNumber(data.readDoubleLE(6)));
        else if (data[6] === 0) formulaCell = [row, col];
        break;
      }
      case Biff.String:
        if (formulaCell) put(formulaCell[0], formulaCell[1], readUnicodeString(data, 0, 2).text);
        formulaCell = null;
        break;
    }
  }
  return { title: summaryTitle(container), text: sections.join("\n\n") };
}

/** A BIFF8 "ShortXLUnicodeString": 1-byte length, flags, then 8-bit or UTF-16 characters. */
function readShortString(data: Buffer, at: number): string {
  const length = data[at];
  const wide = (data[at + 1] & 1) === 1;
  return wide ? data.toString("utf16le", at + 2, at + 2 + length * 2) : data.toString("latin1", at + 2, at + 2 + length);
}

/** An XLUnicodeString with a 2-byte length (LABEL, STRING). */
function readUnicodeString(data: Buffer, at: number, lengthBytes: 1 | 2): { text: string } {
  const length = lengthBytes === 2 ? data.readUInt16LE(at) : data[at];
  const wide = (data[at + lengthBytes] & 1) === 1;
  const start = at + lengthBytes + 1;
  return { text: wide ? data.toString("utf16le", start, start + length * 2) : data.toString("latin1", start, start + length) };
}

/**
 * The shared string table: strings may be split across CONTINUE records, and a split inside
 * the characters starts the next record with a fresh 1-byte "wide" flag.
 */
function sharedStrings(pieces: Buffer[]): string[] {
  let piece = 0;
  let pos = 8; // SST starts with total and unique counts
  const count = pieces[0].length >= 8 ? pieces[0].readUInt32LE(4) : 0;
  const ensure = (): boolean => {
    while (piece < pieces.length && pos >= pieces[piece].length) {
      piece++;
      pos = 0;
    }
    return piece < pieces.length;
  };
  const byte = (): number => (ensure() ? pieces[piece][pos++] : 0);
  const u16 = (): number => byte() | (byte() << 8);
  const u32 = (): number => (u16() | (u16() << 16)) >>> 0;
  const skip = (n: number): void => {
    for (let left = n; left > 0 && ensure(); ) {
      const step = Math.min(left, pieces[piece].length - pos);
      pos += step;
      left -= step;
    }
  };
  const out: string[] = [];
  for (let s = 0; s < count && ensure(); s++) {
    let chars = u16();
    const flags = byte();
    let wide = (flags & 1) === 1;
    const runs = flags & 8 ? u16() : 0;
    const ext = flags & 4 ? u32() : 0;
    let text = "";
    while (chars > 0 && piece < pieces.length) {
      const available = pieces[piece].length - pos;
      const take = Math.min(chars, wide ? Math.floor(available / 2) : available);
      if (take > 0) {
        const end = pos + take * (wide ? 2 : 1);
        text += pieces[piece].toString(wide ? "utf16le" : "latin1", pos, end);
        pos = end;
        chars -= take;
      }
      if (chars > 0) {
        // The characters go on in the next CONTINUE record, which starts with its own "wide" flag.
        piece++;
        pos = 0;
        if (piece < pieces.length) wide = (pieces[piece][pos++] & 1) === 1;
      }
    }
    skip(runs * 4 + ext);
    out.push(text);
  }
  return out;
}

/** An RK number: a 30-bit integer or the top 30 bits of a double, optionally divided by 100. */
function rkValue(rk: number): number {
  let value: number;
  if (rk & 2) value = rk >> 2;
  else {
    const buffer = Buffer.alloc(8);
    buffer.writeInt32LE(rk & ~3, 4);
    value = buffer.readDoubleLE(0);
  }
  return rk & 1 ? value / 100 : value;
}

function formatNumber(value: number): string {
  return Number.isFinite(value) ? String(Number(value.toPrecision(15))) : "";
}

// ---------------------------------------------------------------- PowerPoint 97-2003

enum Ppt {
  TextCharsAtom = 0x0fa0,
  TextBytesAtom = 0x0fa8,
  SlideListWithText = 0x0ff0,
  MainMaster = 0x03f8,
  Handout = 0x0fc9,
  CryptSession10Container = 0x2f14,
}

/**
 * The text of a presentation: every text atom of the "PowerPoint Document" record stream, in
 * stream order (the slides' placeholder text, then text boxes and notes), except the masters'
 * and handouts' ("Click to edit Master title style"). Paragraph breaks (\r) and line breaks (\v) become lines.
 */
export function pptText(bytes: Uint8Array): { title?: string; text: string } {
  const container = openCompoundFile(bytes, "PowerPoint presentation");
  const document = stream(container, "PowerPoint Document");
  if (!document) throw corruptFile("PowerPoint presentation");
  if (CFB.find(container, "EncryptedSummary")) throw passwordProtected("PowerPoint presentation");
  const texts: string[] = [];
  const walk = (start: number, end: number, depth: number): void => {
    for (let pos = start; pos + 8 <= end; ) {
      const header = document.readUInt16LE(pos);
      const type = document.readUInt16LE(pos + 2);
      const size = document.readUInt32LE(pos + 4);
      const body = pos + 8;
      const next = Math.min(end, body + size);
      if (type === Ppt.CryptSession10Container) throw passwordProtected("PowerPoint presentation");
      const isContainer = (header & 0x0f) === 0x0f;
      const instance = header >> 4;
      const masters = type === Ppt.MainMaster || type === Ppt.Handout || (type === Ppt.SlideListWithText && instance === 1);
      if (isContainer && !masters && depth < 32) walk(body, next, depth + 1);
      else if (type === Ppt.TextCharsAtom) texts.push(document.toString("utf16le", body, next));
      else if (type === Ppt.TextBytesAtom) texts.push(document.toString("latin1", body, next));
      pos = body + size;
    }
  };
  walk(0, document.length, 0);
  const text = texts
    .map((t) => t.replace(/[\r\v]/g, "\n").trim())
    .filter((t) => t && t !== "*") // "*" is a slide-number field's placeholder on notes pages
    .join("\n\n");
  return { title: summaryTitle(container), text };
}

// ---------------------------------------------------------------- document properties

/**
 * PIDSI_TITLE (2) of the "\x05SummaryInformation" property set (MS-OLEPS): an 8-bit string in
 * the set's code page (PID 1), or UTF-16.
 */
function summaryTitle(container: Container): string | undefined {
  const data = stream(container, "\u0005SummaryInformation");
  if (!data || data.length < 48) return undefined;
  try {
    const section = data.readUInt32LE(44);
    const count = data.readUInt32LE(section + 4);
    const properties = new Map<number, number>();
    for (let i = 0; i < count; i++) properties.set(data.readUInt32LE(section + 8 + i * 8), section + data.readUInt32LE(section + 12 + i * 8));
    const codePageAt = properties.get(1);
    const codePage = codePageAt === undefined ? 1252 : data.readUInt16LE(codePageAt + 4);
    const at = properties.get(2);
    if (at === undefined) return undefined;
    const type = data.readUInt16LE(at);
    const length = data.readUInt32LE(at + 4);
    let title: string;
    if (type === 0x1f) title = data.toString("utf16le", at + 8, at + 8 + length * 2);
    else if (type === 0x1e) title = decodeCodePage(data.subarray(at + 8, at + 8 + length), codePage);
    else return undefined;
    return title.replace(/\0+$/, "").trim() || undefined;
  } catch {
    return undefined; // a damaged property set costs the title, not the text
  }
}

function decodeCodePage(bytes: Uint8Array, codePage: number): string {
  if (codePage === 65001) return new TextDecoder("utf-8").decode(bytes);
  try {
    return new TextDecoder(`windows-${codePage}`).decode(bytes);
  } catch {
    return new TextDecoder("windows-1252").decode(bytes);
  }
}
