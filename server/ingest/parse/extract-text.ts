import { corruptFile, passwordProtected } from "./failures";
import { extensionOf, formatOf, isImage, titleFromFileName, type FileFormat } from "./file-types";
import { epubText } from "./formats/epub";
import { imageText } from "./formats/image";
import { docText, isEncryptedPackage, pptText, xlsText } from "./formats/legacy-office";
import { emlText, msgText } from "./formats/mail";
import { htmlText } from "./formats/markup-text";
import { odfText } from "./formats/odf";
import { docxText, pptxText, xlsxText } from "./formats/ooxml";
import { pdfText } from "./formats/pdf";
import { isRtf, rtfText } from "./formats/rtf";
import { isZip } from "./formats/zip-package";
import { ocrContext, type OcrContext } from "./ocr/ocr-context";
import { ocrSettings } from "./ocr/ocr-engine";
import { ParseError, type TextSegment } from "./parse-types";
import { decodeText, looksLikeText } from "./text-decoder";

export interface ExtractedText {
  /** The document's own title where its format has one (see extractText), else the file name. */
  title: string;
  text: string;
  /** A paged document's text part by part (PDF pages, TIFF frames, slides, sheets), for chunks that say where they are. */
  segments?: TextSegment[];
  /** Pages (or pictures) left unread because they need OCR and OCR is off; absent for none. */
  ocrSkipped?: number;
}

type Extracted = { title?: string; text: string; segments?: TextSegment[]; ocrSkipped?: number };

const OOXML_NAMES: Partial<Record<FileFormat, string>> = { docx: "Word document", xlsx: "Excel workbook", pptx: "PowerPoint presentation" };

/**
 * The title and plain text of one file, chosen by its extension. Throws ParseError for a
 * corrupt, encrypted or unsupported file, worded for a user (failures.ts). Runs inside the
 * parser workers (parse.worker.ts).
 *
 * The title is the document's own where the format has one (PDF metadata or first-page
 * heading, HTML <title> or first <h1>, Office and OpenDocument core properties, EPUB dc:title,
 * an e-mail's subject, a Markdown file's first "# " heading), else the file name. A document
 * whose only text is its title (a page with nothing but a <title>) is indexed by its title.
 */
export async function extractText(fileName: string, bytes: Uint8Array, ocr: OcrContext = ocrContext()): Promise<ExtractedText> {
  const format = formatOf(fileName);
  if (format === null) throw new ParseError(`Unsupported file type: ${extensionOf(fileName) ? `.${extensionOf(fileName)}` : "no extension"}`);
  const extracted = await extract(format, bytes, ocr);
  const title = extracted.title?.replace(/\s+/g, " ").trim();
  const ocrSkipped = extracted.ocrSkipped ?? 0;
  // A scan left unread is skipped for that reason, not indexed by its title alone.
  const text = /\S/.test(extracted.text) || ocrSkipped > 0 ? extracted.text : (title ?? "");
  return { title: title || titleFromFileName(fileName), text, ...(extracted.segments ? { segments: extracted.segments } : {}), ...(ocrSkipped > 0 ? { ocrSkipped } : {}) };
}

async function extract(format: FileFormat, bytes: Uint8Array, ocr: OcrContext): Promise<Extracted> {
  if (isImage(format)) {
    if (!ocrSettings().enabled) return { text: "", ocrSkipped: 1 };
    const segments = await imageText(format, bytes, ocr);
    return { text: segments.map((s) => s.text).join("\n\n"), segments };
  }
  switch (format) {
    case "text":
      return { text: decodeText(bytes) };
    case "markdown":
      return markdownText(decodeText(bytes));
    case "json":
      return { text: jsonText(decodeText(bytes)) };
    case "html":
      return htmlText(decodeText(bytes));
    case "pdf": {
      const pdf = await pdfText(bytes, ocr);
      const segments = pdf.pages.map((page, i) => ({ text: page.text, page: i + 1, location: `page ${i + 1}`, scanned: page.scanned }));
      return { title: pdf.title, text: pdf.text, segments, ocrSkipped: pdf.ocrSkipped };
    }
    case "docx":
    case "xlsx":
    case "pptx":
      // Saved with a password, an Office 2007+ file is a compound file around an encrypted package.
      if (!isZip(bytes) && isEncryptedPackage(bytes)) throw passwordProtected(OOXML_NAMES[format]!);
      return format === "docx" ? docxText(bytes) : format === "xlsx" ? xlsxText(bytes) : pptxText(bytes);
    case "odt":
      return odfText(bytes, "ODT");
    case "ods":
      return odfText(bytes, "ODS");
    case "odp":
      return odfText(bytes, "ODP");
    // Files under the legacy Office extensions are often something else, read for what they
    // are: Word 2007+ files saved under the old extension, RTF saved by Word as .doc, text
    // (TeX's documented sources are .doc files, as are old README-style notes; a real corpus had
    // both), HTML tables saved as .xls. Only bytes that are none of these go to the 97-2003
    // readers, which say "corrupt" for anything not a compound file.
    case "doc":
      if (isZip(bytes)) return docxText(bytes);
      if (isRtf(bytes)) return rtfText(bytes);
      return misnamedText(bytes) ?? docText(bytes);
    case "xls":
      return isZip(bytes) ? xlsxText(bytes) : (misnamedText(bytes) ?? xlsText(bytes));
    case "ppt":
      return isZip(bytes) ? pptxText(bytes) : (misnamedText(bytes) ?? pptText(bytes));
    case "rtf":
      return rtfText(bytes);
    case "epub":
      return epubText(bytes);
    case "eml":
      return emlText(bytes);
    case "msg":
      return msgText(bytes);
  }
}

/** A file under a binary format's extension whose bytes are text: HTML read as HTML, anything else as plain text; null for binary bytes. */
function misnamedText(bytes: Uint8Array): Extracted | null {
  if (!looksLikeText(bytes)) return null;
  const text = decodeText(bytes);
  return /^\s*<(?:!doctype\s+html|html|table)\b/i.test(text.slice(0, 1024)) ? htmlText(text) : { text };
}

/** Markdown is indexed as written; its title is its first level-1 heading ("# Title"), if one comes early. */
function markdownText(text: string): Extracted {
  const heading = /^(?:[ \t]*\n)*(?:(?!#)[^\n]*\n){0,20}?#[ \t]+([^\n#][^\n]*?)[ \t#]*$/m.exec(text.slice(0, 4096));
  return { title: heading?.[1], text };
}

/** Keys and values of a JSON document, one "key: value" line each, nested values indented. */
function jsonText(source: string): string {
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch {
    throw corruptFile("JSON document");
  }
  const lines: string[] = [];
  const walk = (node: unknown, label: string, depth: number): void => {
    const indent = "  ".repeat(depth);
    if (node !== null && typeof node === "object") {
      if (label) lines.push(`${indent}${label}:`);
      const entries = Array.isArray(node) ? node.map((v) => ["", v] as const) : Object.entries(node);
      for (const [key, child] of entries) walk(child, key, label ? depth + 1 : depth);
    } else {
      lines.push(`${indent}${label ? `${label}: ` : ""}${String(node)}`);
    }
  };
  walk(value, "", 0);
  return lines.join("\n");
}
