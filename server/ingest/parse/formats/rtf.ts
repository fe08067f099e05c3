import { TextDecoder } from "node:util";
import { corruptFile } from "../failures";

/**
 * Destinations whose text is not the document's: tables of fonts, colours, styles and lists,
 * embedded pictures and objects, field instructions, document variables. (\info is handled
 * apart: its \title is the title.) Any "\*" destination is skipped too, as the spec allows
 * for readers that do not know it.
 */
const SKIPPED = new Set([
  "fonttbl", "colortbl", "stylesheet", "listtable", "listoverridetable", "revtbl", "rsidtbl", "generator", "xmlnstbl",
  "pict", "object", "objdata", "shppict", "nonshppict", "blipuid", "themedata", "colorschememapping", "datastore",
  "latentstyles", "fldinst", "docvar", "header", "headerl", "headerr", "headerf", "footer", "footerl", "footerr",
  "footerf", "private", "pgdsctbl", "mmathPr", "filetbl", "bkmkstart", "bkmkend",
]);
const PARAGRAPH = new Set(["par", "sect", "page", "row", "line"]);
const CELL = new Set(["cell", "nestcell", "tab"]);
const SYMBOLS: Readonly<Record<string, string>> = {
  emdash: "\u2014", endash: "\u2013", bullet: "\u2022", lquote: "\u2018", rquote: "\u2019", ldblquote: "\u201c", rdblquote: "\u201d",
  emspace: " ", enspace: " ", qmspace: " ",
};

interface Group {
  skip: boolean;
  /** Characters to drop after a \uN (its ANSI fallback), as set by \ucN. */
  uc: number;
  /** The group is \info or inside it (document properties). */
  info: boolean;
  /** The group is \info's \title: its text is the title. */
  title: boolean;
}

/** Whether bytes open as RTF does ("{\\rtf"), whatever the file's name says. */
export function isRtf(bytes: Uint8Array): boolean {
  return bytes[0] === 0x7b && bytes[1] === 0x5c && bytes[2] === 0x72 && bytes[3] === 0x74 && bytes[4] === 0x66;
}

/**
 * Plain text and title of an RTF document: a small reader of the RTF 1.9 syntax (groups, control
 * words, \'hh bytes in the document's ANSI code page, \uN Unicode with its fallback skipped,
 * \bin data skipped). Headers and footers are left out (repeated on every page in the source).
 */
export function rtfText(bytes: Uint8Array): { title?: string; text: string } {
  // RTF is 7-bit ASCII with escapes; latin1 maps each byte to one char, so indexes are byte offsets.
  const source = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  if (!isRtf(bytes)) throw corruptFile("RTF document");
  let decoder = new TextDecoder("windows-1252");
  const out: string[] = [];
  let title = "";
  let pendingBytes: number[] = [];
  const stack: Group[] = [];
  let group: Group = { skip: false, uc: 1, info: false, title: false };
  let skipChars = 0;
  let destinationStart = false; // just after "{": the next control word may name a destination

  const flushBytes = (): void => {
    if (pendingBytes.length === 0) return;
    const text = decoder.decode(Uint8Array.from(pendingBytes));
    pendingBytes = [];
    write(text);
  };
  const write = (text: string): void => {
    if (group.title) title += text;
    else if (!group.skip) out.push(text);
  };
  const put = (text: string): void => {
    flushBytes();
    write(text);
  };

  let i = 0;
  while (i < source.length) {
    const ch = source[i];
    if (ch === "{") {
      flushBytes();
      stack.push(group);
      group = { ...group };
      destinationStart = true;
      i++;
      continue;
    }
    if (ch === "}") {
      flushBytes();
      group = stack.pop() ?? group;
      destinationStart = false;
      i++;
      continue;
    }
    if (ch === "\r" || ch === "\n") {
      i++;
      continue;
    }
    if (ch !== "\\") {
      destinationStart = false;
      if (skipChars > 0) skipChars--;
      else if (ch.charCodeAt(0) >= 0x80) pendingBytes.push(ch.charCodeAt(0));
      else put(ch);
      i++;
      continue;
    }
    // A control symbol or word.
    const next = source[i + 1];
    if (next === undefined) break;
    if (next === "'") {
      const byte = parseInt(source.slice(i + 2, i + 4), 16);
      i += 4;
      destinationStart = false;
      if (skipChars > 0) skipChars--;
      else if (!Number.isNaN(byte)) pendingBytes.push(byte);
      continue;
    }
    if (!/[a-zA-Z]/.test(next)) {
      i += 2;
      if (next === "*") {
        group.skip = true; // an optional destination: skipped unless it is one we read (none are)
        continue;
      }
      destinationStart = false;
      if (skipChars > 0) {
        skipChars--;
        continue;
      }
      if (next === "\\" || next === "{" || next === "}") put(next);
      else if (next === "~") put("\u00a0");
      else if (next === "_") put("-");
      else if (next === "\r" || next === "\n") put("\n");
      continue; // "\-" (optional hyphen), "\:" and others print nothing
    }
    const match = /^([a-zA-Z]{1,32})(-?\d{1,10})? ?/.exec(source.slice(i + 1, i + 48));
    if (!match) {
      i++;
      continue;
    }
    i += 1 + match[0].length;
    const word = match[1];
    const param = match[2] === undefined ? undefined : Number(match[2]);
    const atStart = destinationStart;
    destinationStart = false;
    if (word === "bin") {
      i += Math.max(0, param ?? 0); // raw binary data follows
      continue;
    }
    if (skipChars > 0 && word !== "u") {
      skipChars--;
      continue;
    }
    if (atStart && word === "info") {
      group.skip = true;
      group.info = true;
      continue;
    }
    if (atStart && word === "title" && group.info) {
      group.title = true;
      continue;
    }
    if (atStart && SKIPPED.has(word)) {
      group.skip = true;
      continue;
    }
    switch (word) {
      case "ansicpg":
        decoder = codePageDecoder(param) ?? decoder;
        break;
      case "uc":
        group.uc = Math.max(0, param ?? 1);
        break;
      case "u":
        if (param !== undefined) put(String.fromCharCode(param < 0 ? param + 65536 : param));
        skipChars = group.uc;
        break;
      default:
        if (PARAGRAPH.has(word)) put("\n");
        else if (CELL.has(word)) put("\t");
        else if (SYMBOLS[word]) put(SYMBOLS[word]);
    }
  }
  flushBytes();
  return { title: title.trim() || undefined, text: out.join("") };
}

/** A TextDecoder for a Windows code page number (\ansicpg1252, 1251, 932, ...), if Node knows it. */
function codePageDecoder(codePage: number | undefined): TextDecoder | undefined {
  if (codePage === undefined) return undefined;
  const label = codePage === 932 ? "shift_jis" : codePage === 936 ? "gbk" : codePage === 949 ? "euc-kr" : codePage === 950 ? "big5" : `windows-${codePage}`;
  try {
    return new TextDecoder(label);
  } catch {
    return undefined;
  }
}
