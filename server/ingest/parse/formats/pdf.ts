import { corruptFile, passwordProtected } from "../failures";
import { cleanOcrText, ocrContext, type OcrContext } from "../ocr/ocr-context";
import { ocrSettings, pagePipeline, recognize } from "../ocr/ocr-engine";
import type { PagePipeline } from "../ocr/page-pipeline";
import { ParseError } from "../parse-types";
import { ocrResolution, renderForOcr } from "./pdf-pages";
import { isPdfiumAbort, outOfMemory, type Pdfium, withPdfium } from "./pdfium";

/** One page's text: from its text layer, or (scanned) read by OCR from its picture. */
export interface PdfPage {
  text: string;
  scanned: boolean;
}

export interface PdfText {
  title?: string;
  text: string;
  pages: PdfPage[];
  /** Pages that would have needed OCR, with OCR off. */
  ocrSkipped: number;
}

/** A line of the first page, with the largest font size on it: the title heuristic's input. */
interface Line {
  text: string;
  height: number;
}

// PDFium's FPDF_GetLastError codes (fpdfview.h) for a document it would not open.
const FPDF_ERR_PASSWORD = 4;
const FPDF_ERR_SECURITY = 5; // an encryption scheme PDFium does not support: still locked to us
/**
 * PDFium's marks for a hyphen that ended a line, where it joined the word's two halves: 0x02 per
 * character (FPDFText_GetUnicode), 0xFFFE in FPDFText_GetText's string.
 */
const LINE_END_HYPHENS = new Set([0x02, 0xfffe]);
/**
 * Where the type (font or size) changes between two runs on a line and the second does not
 * start exactly where the first ends, the second is another word (as pdftotext reads it): a TeX
 * word set in \texttt or slanted type followed by roman ("expex.tex contains", "\\ling key"), a
 * subscript and the next symbol after TeX's \scriptspace ("βp xp"), a table cell's monospaced
 * name running into the next cell ("secret-tool" then "store"). Loose character boxes of slanted
 * type reach past the glyph's advance, so the gap there is a little below zero: an overlap up to
 * this share of the character box's height still counts as a break.
 */
const TYPE_CHANGE_OVERLAP = 0.1;
/**
 * A run in another type that starts where the previous one ends (within this share of the
 * character box's height) continues the word: a bold initial letter ("k" then "ill" in debian-reference's SysRq
 * table), or a subscript right after its symbol ("β" then "p").
 */
const TYPE_CHANGE_ABUT = 0.015;
/** Letters and digits: a change of type between two of them is a word break, not between a word and its comma. */
const isWordChar = (code: number): boolean => /[\p{L}\p{N}]/u.test(String.fromCodePoint(code));
/**
 * TeX's OT1 fonts put the ligatures ff, fi, fl, ffi, ffl at codes 0x0B-0x0F and often carry no
 * Unicode map; PDFium then gives the raw code, and "file" would be indexed as "le".
 */
const TEX_LIGATURES = [[0x66, 0x66], [0x66, 0x69], [0x66, 0x6c], [0x66, 0x66, 0x69], [0x66, 0x66, 0x6c]]; // from 0x0B
/**
 * TeX's T1 (Cork) fonts put the same ligatures at 0x1B-0x1F, their accented letters at Latin-1's
 * codes and quotes and dashes at 0x10-0x16 (0x0B-0x0F are accents and single quotes there, not
 * ligatures). Without a Unicode map PDFium gives the raw codes; a font that shows unmapped codes
 * of Latin-1 letters (0xC0-0xFF: "ö" of "veröffentlicht") is read as T1, since OT1 has 7 bits.
 */
const T1_LIGATURES = 0x1b;
const T1_PUNCTUATION = [0x201c, 0x201d, 0x201e, 0xab, 0xbb, 0x2013, 0x2014]; // from 0x10: “ ” „ « » – —
/**
 * Stand, in the text being built, where a hyphen ended a line, until the whole document says how
 * the halves meet (resolveLineEndHyphens): before a lower-case letter (joined unless the document
 * writes the compound with its hyphen), before a capital (kept unless it writes the word joined).
 */
const JOIN_MARK = 0xfdd0; // Unicode noncharacters: never text (PDFium's are dropped below)
const KEEP_MARK = 0xfdd1;
/** A character drawn with no box at all (a glyph the font lacks) that starts this share of the box height after the previous one starts a word (TeX's narrowest space is about 0.17 em). */
const EMPTY_GLYPH_GAP = 0.15;
/**
 * Within one text object, a move back to the left by more than this many box heights starts a
 * line: the object drew something elsewhere first (reledpar's measuring copy of a headline, far
 * right of the page, then the body from the left margin). Accents set back over their letter and
 * right-to-left glyphs step back less than this.
 */
const SAME_OBJECT_BACK = 3;
const isUpper = (code: number): boolean => /\p{Lu}/u.test(String.fromCodePoint(code));

/**
 * A PDF's text, page by page, read by PDFium, which puts spaces and line breaks where the page
 * layout implies them (words on adjacent lines or table columns never run together). On top of
 * that, where PDFium runs two text objects together, a run in another font that starts visibly
 * after the previous one (`\documentclass` in typewriter type, then "or"), or that touches it in
 * another type without being set flush ("secret-tool" overflowing a table cell into "store"),
 * gets a space, and one on another baseline or back to the left (a table cell's next line) starts a line;
 * so does a jump far back left within one run, and a glyph that draws nothing a space's width on
 * (reledpar's Greek "θαζζ vιβε"). A word hyphenated at the end of a line (PDFium marks the hyphen)
 * is joined again, as pdftotext does, so it is found whole, unless the hyphen is the compound's
 * own (resolveLineEndHyphens). TeX's T1 fonts without a Unicode map get their ligatures back.
 * Title: the document's Title metadata, unless it is a placeholder ("Untitled", "Microsoft
 * Word - x.doc"), else the first page's heading (its largest text, when clearly larger than the
 * body's).
 */
export async function pdfText(bytes: Uint8Array, ocr: OcrContext = ocrContext()): Promise<PdfText> {
  return withPdfium(async (pdfium) => {
    const { api, raw } = pdfium;
    // PDFium reads the file from its own memory for as long as the document is open.
    const file = raw.malloc(Math.max(bytes.length, 1));
    if (!file) throw outOfMemory(pdfium);
    pdfium.heapU8().set(bytes, file);
    let doc = 0;
    let pipeline: PagePipeline | null = null;
    try {
      doc = api.FPDF_LoadMemDocument(file, bytes.length, "");
      if (!doc) {
        const code = api.FPDF_GetLastError();
        throw code === FPDF_ERR_PASSWORD || code === FPDF_ERR_SECURITY ? passwordProtected("PDF") : corruptFile("PDF");
      }
      const pageCount = api.FPDF_GetPageCount(doc);
      const pages: PdfPage[] = [];
      let ocrSkipped = 0;
      let firstPageLines: Line[] = [];
      const t1Fonts = new Set<number>(); // fonts found to be TeX's T1 on any page so far
      const ocrOn = ocrSettings().enabled;
      for (let index = 0; index < pageCount; index++) {
        const page = pageText(pdfium, doc, index, index === 0, t1Fonts);
        if (index === 0) firstPageLines = page.lines;
        const scan = scannedPage(pdfium, doc, index, pageCount, page.text, ocr, ocrOn ? (pipeline?.idle ?? true) : null);
        if (scan === OCR_SKIPPED) ocrSkipped++;
        // Scanned pages are read while the next ones are drawn (page-pipeline.ts); their text comes in after.
        else if (scan) {
          pipeline ??= await pagePipeline(ocr);
          await pipeline.add({ page: index + 1, recognize: (signal) => recognize(scan.image, { label: `page ${index + 1}` }, scan.dpi, signal) });
        }
        pages.push({ text: page.text, scanned: !!scan && scan !== OCR_SKIPPED });
      }
      const read = pipeline ? await pipeline.finish() : new Map<number, string>();
      for (const [page, text] of read) pages[page - 1].text = cleanOcrText(text);
      // Hyphens are resolved over the whole document (a compound written elsewhere), then it is cut into its pages again.
      const resolved = resolveLineEndHyphens(pages.map((page) => page.text).join(PAGE_BREAK)).split(PAGE_BREAK);
      for (const [i, text] of resolved.entries()) pages[i].text = text;
      const text = resolved.join("\n\n");
      for (const line of firstPageLines) line.text = resolveLineEndHyphens(line.text);
      return { title: metadataTitle(pdfium, doc) ?? headingOf(firstPageLines), text, pages, ocrSkipped };
    } catch (err) {
      if (err instanceof ParseError || isPdfiumAbort(err)) throw err;
      throw corruptFile("PDF");
    } finally {
      pipeline?.stop(); // a file that failed leaves no recognition running
      if (doc) api.FPDF_CloseDocument(doc);
      raw.free(file);
    }
  });
}

/** Between pages while their hyphens are resolved: a form feed never is in a page's text (control characters are dropped or mapped). */
const PAGE_BREAK = "\n\f\n";
const OCR_SKIPPED = Symbol("ocr skipped");

/**
 * A page whose text layer is missing or only a stamp, drawn by PDFium for OCR; OCR_SKIPPED when
 * it would need OCR and OCR is off (`ocrIdle` null); null for a page of text. `ocrIdle`: whether
 * no recognition of the file runs now.
 */
function scannedPage(pdfium: Pdfium, doc: number, index: number, pageCount: number, text: string, ocr: OcrContext, ocrIdle: boolean | null): { image: Uint8Array; dpi: number } | typeof OCR_SKIPPED | null {
  const { api } = pdfium;
  const page = api.FPDF_LoadPage(doc, index);
  if (!page) return null;
  try {
    const dpi = ocrResolution(pdfium, page, text);
    if (dpi === null) return null;
    if (ocrIdle === null) return OCR_SKIPPED; // OCR is off
    ocr.page(index + 1, pageCount);
    const start = performance.now();
    const rendered = renderForOcr(pdfium, page, dpi);
    // While a recognition runs, drawing the next page is within OCR's time already.
    if (ocrIdle) ocr.seconds += (performance.now() - start) / 1000;
    return rendered;
  } finally {
    api.FPDF_ClosePage(page);
  }
}

/**
 * One page's text from PDFium's characters (generated spaces and line breaks included). With
 * `withLines`, also its lines and their largest font sizes (the first page, for the heading).
 */
function pageText(pdfium: Pdfium, doc: number, index: number, withLines: boolean, t1Fonts: Set<number>): { text: string; lines: Line[] } {
  const { api, raw } = pdfium;
  const page = api.FPDF_LoadPage(doc, index);
  if (!page) return { text: "", lines: [] }; // a damaged page: the others are still worth reading
  const textPage = api.FPDFText_LoadPage(page);
  const box = raw.malloc(16); // FS_RECTF: left, top, right, bottom (floats)
  const codes: number[] = [];
  const lines: Line[] = [];
  let lineStart = 0;
  let lineHeight = 0;
  const endLine = () => {
    if (withLines) lines.push({ text: fromCodes(codes.slice(lineStart)), height: lineHeight });
    codes.push(0x0a);
    lineStart = codes.length;
    lineHeight = 0;
  };
  // The last character drawn (not generated, not a space) while no space or break has followed it.
  let previous: { object: number; right: number; top: number; bottom: number; code: number; index: number; blankAfter: boolean } | null = null;
  // A character's type (font and size), asked only where two runs touch.
  const fonts = new Map<number, string>();
  const leftAt = (i: number) => (raw.FPDFText_GetLooseCharBox(textPage, i, box) ? pdfium.heapF32()[box >> 2] : Number.NaN);
  // One glyph that stands for several characters ("ff"), which TeX may take from a font of ligatures alone (txfonts' rtxr).
  const inLigature = (i: number) => [i - 1, i + 1].some((j) => j >= 0 && j < count && raw.FPDFText_GetTextObject(textPage, j) === raw.FPDFText_GetTextObject(textPage, i) && leftAt(j) === leftAt(i));
  const typeAt = (i: number) => `${fontName(pdfium, raw.FPDFText_GetTextObject(textPage, i), fonts)}@${raw.FPDFText_GetFontSize(textPage, i).toFixed(1)}`;
  // Between two letters or digits (not a word and its comma), neither part of a ligature glyph.
  const typeChanges = (before: { code: number; index: number }, i: number, code: number) =>
    isWordChar(before.code) && isWordChar(code) && !inLigature(before.index) && !inLigature(i) && typeAt(i) !== typeAt(before.index);
  const count = textPage ? api.FPDFText_CountChars(textPage) : 0;
  // Fonts read as TeX's T1 on this page (see T1_LIGATURES), and those found not to be.
  const t1 = new Map<number, boolean>();
  const fontAt = (i: number) => api.FPDFTextObj_GetFont(raw.FPDFText_GetTextObject(textPage, i));
  const isT1 = (font: number): boolean => {
    const cached = t1.get(font);
    if (cached !== undefined) return cached;
    let known = t1Fonts.has(font);
    if (!known) {
      // Scanned once per font and page, and only on pages with such codes.
      for (let j = 0; j < count && !known; j++) {
        const c = raw.FPDFText_GetUnicode(textPage, j);
        known = c >= 0xc0 && c <= 0xff && api.FPDFText_HasUnicodeMapError(textPage, j) === 1 && fontAt(j) === font;
      }
      if (known) t1Fonts.add(font);
    }
    t1.set(font, known);
    return known;
  };
  // A hyphen PDFium marked at a line end just went by: what follows decides how the halves meet.
  let afterHyphen = false;
  try {
    for (let i = 0; i < count; i++) {
      const code = raw.FPDFText_GetUnicode(textPage, i);
      const hyphen = afterHyphen;
      afterHyphen = false;
      if (LINE_END_HYPHENS.has(code)) {
        previous = null; // the word goes on on the next line: its halves meet again (resolveLineEndHyphens)
        afterHyphen = true;
      } else if (code >= 0x0b && code <= 0x1f && !raw.FPDFText_IsGenerated(textPage, i)) {
        // (PDFium's own line breaks are generated \r\n)
        if (isT1(fontAt(i))) codes.push(...(code >= T1_LIGATURES ? TEX_LIGATURES[code - T1_LIGATURES] : code >= 0x10 && code <= 0x16 ? [T1_PUNCTUATION[code - 0x10]] : []));
        else if (code <= 0x0f) codes.push(...TEX_LIGATURES[code - 0x0b]);
        previous = null;
      } else if (code === 0x0a) {
        endLine();
        previous = null;
      } else if (code === 0x20 || code === 0x09 || code === 0xa0 || code === 0x0d) {
        if (code !== 0x0d) codes.push(0x20); // PDFium breaks lines with \r\n
        previous = null;
      } else if (code >= 0x20 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) && code !== JOIN_MARK && code !== KEEP_MARK) {
        if (hyphen) codes.push(isUpper(code) ? KEEP_MARK : JOIN_MARK);
        if (!raw.FPDFText_IsGenerated(textPage, i)) {
          const object = raw.FPDFText_GetTextObject(textPage, i);
          const [left, top, right, bottom] = raw.FPDFText_GetLooseCharBox(textPage, i, box) ? pdfium.heapF32().subarray(box >> 2, (box >> 2) + 4) : [0, 0, 0, 0];
          // A glyph the font lacks has no box, or one a sliver high (0.01 pt in reledpar's Greek): only a place.
          const blank = previous !== null && left > 0 && top - bottom < (previous.top - previous.bottom) * 0.1;
          if (previous && blank) {
            // After a space's width: "θαζζ" then the blank "v" of "vιβε" (a Latin letter in a Greek font).
            if (!previous.blankAfter && left - previous.right > (previous.top - previous.bottom) * EMPTY_GLYPH_GAP) codes.push(0x20);
            previous.blankAfter = true;
          } else if (previous && top > bottom) {
            // A run PDFium kept on the previous one's line without a break or space between them.
            const size = Math.max(top - bottom, previous.top - previous.bottom);
            if (object === previous.object) {
              if (left < previous.right - size * SAME_OBJECT_BACK) endLine();
            } else {
              const anotherLine = Math.abs(bottom - previous.bottom) > size * 0.25; // e.g. a table cell's second line
              const backLeft = left < previous.right - size * 0.3; // the next column, or a cell's next line
              const gap = left - previous.right;
              if (anotherLine || backLeft) endLine();
              else if (gap > size * 0.08) codes.push(0x20); // a narrow space at a font change
              else if (gap > -size * TYPE_CHANGE_OVERLAP && Math.abs(gap) > size * TYPE_CHANGE_ABUT && typeChanges(previous, i, code)) {
                codes.push(0x20); // another typeface or size with barely any gap: the next word
              }
            }
          }
          if (top > bottom && !blank) previous = { object, right, top, bottom, code, index: i, blankAfter: false };
          else if (!blank) previous = null;
          if (withLines) lineHeight = Math.max(lineHeight, raw.FPDFText_GetFontSize(textPage, i));
        }
        codes.push(code);
      } // other control characters (unmapped glyphs) are dropped
    }
  } finally {
    raw.free(box);
    if (textPage) api.FPDFText_ClosePage(textPage);
    api.FPDF_ClosePage(page);
  }
  if (withLines && lineStart < codes.length) lines.push({ text: fromCodes(codes.slice(lineStart)), height: lineHeight });
  return { text: fromCodes(codes), lines: lines.filter((line) => /\S/.test(line.text)) };
}

/**
 * The name of a text object's font without its subset tag ("ABCDEF+CMR10" is "CMR10"), so two
 * subsets of one face (some producers split a font every 256 glyphs) count as the same font; a
 * font with no name (Type 3) goes by its handle.
 */
function fontName(pdfium: Pdfium, object: number, cache: Map<number, string>): string {
  let name = cache.get(object);
  if (name !== undefined) return name;
  const { api, raw } = pdfium;
  const font = api.FPDFTextObj_GetFont(object);
  const length = font ? api.FPDFFont_GetBaseFontName(font, 0, 0) : 0;
  name = `#${font}`;
  if (length > 1) {
    const buffer = raw.malloc(length);
    try {
      api.FPDFFont_GetBaseFontName(font, buffer, length);
      name = new TextDecoder("latin1").decode(pdfium.heapU8().subarray(buffer, buffer + length - 1)).replace(/^[A-Z]{6}\+/, "");
    } finally {
      raw.free(buffer);
    }
  }
  cache.set(object, name);
  return name;
}

/**
 * How the halves of a word PDFium found hyphenated at a line end meet. Before a lower-case letter
 * the layout usually hyphenated one word ("de-faults" is "defaults", joined as pdftotext does),
 * but a compound keeps its hyphen ("non-branching") when the document writes it so elsewhere:
 * joined, it could only be found as "nonbranching", a word the document never writes; so do two
 * words the document writes apart elsewhere and never joined ("page-builder" where "page builder"
 * is mid-line). Before a
 * capital the hyphen is usually the text's own ("quote-Umgebung", "PDF-Default"), unless the
 * document writes the joined word elsewhere or it is a TeX control word, letters only
 * ("\\Declare-CaptionFont" is "\\DeclareCaptionFont").
 */
function resolveLineEndHyphens(text: string): string {
  let at = text.search(/[\ufdd0\ufdd1]/);
  if (at < 0) return text;
  let compounds: Set<string> | undefined;
  let apart: Set<string> | undefined;
  let lower: string | undefined;
  const out: string[] = [];
  let from = 0;
  // Found by scanning from each mark and each hyphen: a regex over the whole text for words
  // around them made this a fifth of the extraction time of a big manual.
  for (; at >= 0; at = nextMark(text, at + 1)) {
    const start = wordStart(text, at);
    const end = wordEnd(text, at + 1);
    const left = text.slice(start, at);
    const right = text.slice(at + 1, end);
    let joined: boolean;
    if (text[start - 1] === "\\") joined = true; // a TeX control word is letters only: "\\Declare-FloatingEnvironment" is one name
    else if (text.charCodeAt(at) === JOIN_MARK) {
      compounds ??= hyphenatedWords(text);
      apart ??= halvesWrittenApart(text, at);
      const pair = `${left} ${right}`.toLowerCase();
      joined = !compounds.has(`${left}-${right}`.toLowerCase()) && !apart.has(pair);
    } else {
      lower ??= text.toLowerCase();
      joined = lower.includes((left + right).toLowerCase());
    }
    out.push(text.slice(from, at), joined ? "" : "-");
    from = at + 1;
  }
  out.push(text.slice(from));
  return out.join("");
}

function nextMark(text: string, from: number): number {
  const join = text.indexOf("\ufdd0", from);
  const keep = text.indexOf("\ufdd1", from);
  return join < 0 ? keep : keep < 0 ? join : Math.min(join, keep);
}

/** Letters and digits, with a fast path for ASCII (the test runs over every character next to a hyphen). */
function isWordUnit(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 0x80) return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a);
  return isWordChar(text.codePointAt(i) ?? c) || (c >= 0xdc00 && c <= 0xdfff && i > 0 && isWordChar(text.codePointAt(i - 1) ?? c));
}

function wordStart(text: string, at: number): number {
  let i = at;
  while (i > 0 && isWordUnit(text, i - 1)) i--;
  return i;
}

function wordEnd(text: string, from: number): number {
  let i = from;
  while (i < text.length && isWordUnit(text, i)) i++;
  return i;
}

/**
 * Of the halves of the words hyphenated at a line end before a lower-case letter (the join marks
 * from `from` on), the pairs "left right" (lower case) the text also writes apart, as two words
 * with only spaces or a line break between, and never as one word. One pass over the text's
 * words, whatever the number of marks.
 */
function halvesWrittenApart(text: string, from: number): Set<string> {
  const pairs = new Map<string, string>();
  const halfLengths = new Set<number>();
  for (let at = from; at >= 0; at = nextMark(text, at + 1)) {
    if (text.charCodeAt(at) !== JOIN_MARK) continue;
    const start = wordStart(text, at);
    const end = wordEnd(text, at + 1);
    if (start === at || end === at + 1) continue;
    const left = text.slice(start, at).toLowerCase();
    const right = text.slice(at + 1, end).toLowerCase();
    pairs.set(`${left} ${right}`, left + right);
    halfLengths.add(at - start).add(end - at - 1).add(end - start - 1);
  }
  const apart = new Set<string>();
  const joinedForms = new Set(pairs.values());
  const writtenJoined = new Set<string>();
  let previous: string | null = null;
  let previousEnd = -1;
  for (let i = 0; i < text.length; ) {
    if (!isWordUnit(text, i)) {
      i++;
      continue;
    }
    const end = wordEnd(text, i);
    // Only words as long as a half or a joined form can matter: the others are not sliced.
    const word = halfLengths.has(end - i) ? text.slice(i, end).toLowerCase() : null;
    if (word !== null) {
      if (previous !== null && onlySpacesBetween(text, previousEnd, i)) {
        const pair = `${previous} ${word}`;
        if (pairs.has(pair)) apart.add(pair);
      }
      if (joinedForms.has(word)) writtenJoined.add(word);
    }
    previous = word;
    previousEnd = end;
    i = end;
  }
  for (const pair of apart) if (writtenJoined.has(pairs.get(pair)!)) apart.delete(pair);
  return apart;
}

/** Whether text[from, to) is spaces, tabs and at most one line break (no mark, no punctuation). */
function onlySpacesBetween(text: string, from: number, to: number): boolean {
  if (to <= from) return false;
  let breaks = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) breaks++;
    else if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return breaks <= 1;
}

/** Every "word-word" the text writes with a hyphen of its own, lower case. */
function hyphenatedWords(text: string): Set<string> {
  const found = new Set<string>();
  for (let at = text.indexOf("-"); at >= 0; at = text.indexOf("-", at + 1)) {
    const start = wordStart(text, at);
    const end = wordEnd(text, at + 1);
    if (start < at && end > at + 1) found.add(text.slice(start, end).toLowerCase());
  }
  return found;
}

/** A string from code points, in slices (spreading a whole page's at once would overflow the stack). */
function fromCodes(codes: number[]): string {
  let text = "";
  for (let i = 0; i < codes.length; i += 8192) text += String.fromCodePoint(...codes.slice(i, i + 8192));
  return text;
}

/** Titles that tools write when the author gave none: not worth showing instead of the file name. */
const PLACEHOLDER_TITLE = /^(untitled|title|document|slide ?\d*|microsoft (word|powerpoint|excel) - .*|.*\.(docx?|pptx?|xlsx?|pdf|rtf|odt|tex|dvi|indd|qxd|ps|eps))$/i;

/** The document information dictionary's Title (FPDF_GetMetaText gives UTF-16LE with a terminator). */
function metadataTitle(pdfium: Pdfium, doc: number): string | undefined {
  const { api, raw } = pdfium;
  const length = api.FPDF_GetMetaText(doc, "Title", 0, 0);
  if (length <= 2) return undefined;
  const buffer = raw.malloc(length);
  try {
    api.FPDF_GetMetaText(doc, "Title", buffer, length);
    const title = new TextDecoder("utf-16le").decode(pdfium.heapU8().subarray(buffer, buffer + length - 2));
    const clean = title.replace(/\s+/g, " ").trim();
    return clean && !PLACEHOLDER_TITLE.test(clean) ? clean : undefined;
  } finally {
    raw.free(buffer);
  }
}

/**
 * The first page's heading: the first line set in its largest type, when that type is at least
 * 1.3 times the page's most common size (so a page of uniform text has no heading) and the line
 * reads like a title (2 to 200 characters, some letters).
 */
function headingOf(lines: Line[]): string | undefined {
  if (lines.length < 2) return undefined;
  const counts = new Map<number, number>();
  for (const line of lines) counts.set(Math.round(line.height), (counts.get(Math.round(line.height)) ?? 0) + line.text.length);
  const bodySize = [...counts.entries()].sort((x, y) => y[1] - x[1])[0][0];
  const largest = Math.max(...lines.map((line) => line.height));
  if (largest < bodySize * 1.3) return undefined;
  const text = lines.find((line) => line.height === largest)?.text.replace(/\s+/g, " ").trim() ?? "";
  return text.length >= 2 && text.length <= 200 && /\p{L}/u.test(text) ? text : undefined;
}
