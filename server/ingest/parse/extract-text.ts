import { unzipSync, type Unzipped } from "fflate";
import { convert as htmlToText } from "html-to-text";
import mammoth from "mammoth";
import { extractText as extractPdfText, getDocumentProxy, getMeta } from "unpdf";
import { extensionOf, formatOf, titleFromFileName } from "./file-types";
import { ParseError } from "./parse-types";
import { decodeText } from "./text-decoder";

export interface ExtractedText {
  title: string;
  text: string;
}

/**
 * The title and plain text of one file, chosen by its extension. Throws ParseError for a
 * corrupt file or an unsupported type. Runs inside the parser workers (parse.worker.ts).
 */
export async function extractText(fileName: string, bytes: Uint8Array): Promise<ExtractedText> {
  const fallbackTitle = titleFromFileName(fileName);
  const format = formatOf(fileName);
  let extracted: { title?: string; text: string };
  switch (format) {
    case "text":
      extracted = { text: decodeText(bytes) };
      break;
    case "json":
      extracted = { text: jsonText(decodeText(bytes)) };
      break;
    case "html":
      extracted = htmlText(decodeText(bytes));
      break;
    case "pdf":
      extracted = await pdfText(bytes);
      break;
    case "docx":
      extracted = await docxText(bytes);
      break;
    case "pptx":
      extracted = pptxText(bytes);
      break;
    case "xlsx":
      extracted = xlsxText(bytes);
      break;
    case null:
      throw new ParseError(`Unsupported file type: ${extensionOf(fileName) ? `.${extensionOf(fileName)}` : "no extension"}`);
  }
  const title = extracted.title?.replace(/\s+/g, " ").trim();
  return { title: title || fallbackTitle, text: extracted.text };
}

// ---------------------------------------------------------------- plain text

/** Keys and values of a JSON document, one "key: value" line each, nested values indented. */
function jsonText(source: string): string {
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (err) {
    throw new ParseError(`Not valid JSON: ${messageOf(err)}`);
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

function htmlText(html: string): { title?: string; text: string } {
  const title = /<title\b[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  const text = htmlToText(html, {
    wordwrap: false,
    selectors: [
      { selector: "a", options: { ignoreHref: true } },
      { selector: "img", format: "skip" },
      { selector: "head", format: "skip" },
    ],
  });
  return { title: title === undefined ? undefined : htmlToText(title, { wordwrap: false }), text };
}

// ---------------------------------------------------------------- PDF

async function pdfText(bytes: Uint8Array): Promise<{ title?: string; text: string }> {
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // pdf.js may take ownership of (detach) the array it is given; give it its own copy of the view.
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 }); // 0: errors only, no console noise
  } catch (err) {
    const name = (err as { name?: string } | null)?.name;
    if (name === "PasswordException") throw new ParseError("PDF is password-protected");
    throw new ParseError(`Not a readable PDF: ${messageOf(err)}`);
  }
  try {
    const { text } = await extractPdfText(pdf, { mergePages: false });
    let title: string | undefined;
    try {
      const meta = await getMeta(pdf);
      const infoTitle: unknown = meta.info?.Title;
      title = typeof infoTitle === "string" ? infoTitle : undefined;
    } catch {
      title = undefined; // broken metadata does not make the text unreadable
    }
    return { title, text: text.join("\n\n") };
  } catch (err) {
    throw new ParseError(`Could not read the text of the PDF: ${messageOf(err)}`);
  } finally {
    await pdf.destroy().catch(() => undefined);
  }
}

// ---------------------------------------------------------------- Office Open XML

async function docxText(bytes: Uint8Array): Promise<{ title?: string; text: string }> {
  const zip = openZip(bytes, "DOCX", (name) => name === "docProps/core.xml");
  try {
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const { value } = await mammoth.extractRawText({ buffer });
    return { title: coreTitle(zip), text: value };
  } catch (err) {
    throw new ParseError(`Not a readable DOCX file: ${messageOf(err)}`);
  }
}

function pptxText(bytes: Uint8Array): { title?: string; text: string } {
  const zip = openZip(bytes, "PPTX", (name) => name.endsWith(".xml") || name.endsWith(".rels"));
  const slideNames = slideOrder(zip);
  if (slideNames.length === 0 && !zip["ppt/presentation.xml"]) {
    throw new ParseError("Not a readable PPTX file: ppt/presentation.xml is missing");
  }
  const slides = slideNames.map((name) => {
    const xml = zipText(zip, name);
    const paragraphs = elements(xml, "a:p").map((p) => elements(p.inner, "a:t").map((t) => decodeXmlEntities(t.inner)).join(""));
    return paragraphs.filter((p) => p.trim()).join("\n");
  });
  return { title: coreTitle(zip), text: slides.filter((s) => s).join("\n\n") };
}

/** Slide parts in presentation order (p:sldIdLst), falling back to slideN numbering. */
function slideOrder(zip: Unzipped): string[] {
  const rels = relationships(zip, "ppt/_rels/presentation.xml.rels", "ppt/");
  const ordered = elements(zipText(zip, "ppt/presentation.xml"), "p:sldId")
    .map((el) => rels.get(attr(el.attrs, "r:id") ?? ""))
    .filter((name): name is string => name !== undefined && zip[name] !== undefined);
  if (ordered.length > 0) return ordered;
  const numbered = Object.keys(zip).filter((name) => /^ppt\/slides\/slide\d+\.xml$/.test(name));
  const slideNumber = (name: string): number => Number(/(\d+)\.xml$/.exec(name)?.[1]);
  return numbered.sort((a, b) => slideNumber(a) - slideNumber(b));
}

function xlsxText(bytes: Uint8Array): { title?: string; text: string } {
  const zip = openZip(bytes, "XLSX", (name) => name.endsWith(".xml") || name.endsWith(".rels"));
  if (!zip["xl/workbook.xml"]) throw new ParseError("Not a readable XLSX file: xl/workbook.xml is missing");
  const shared = elements(zipText(zip, "xl/sharedStrings.xml"), "si").map((si) => stringItemText(si.inner));
  const rels = relationships(zip, "xl/_rels/workbook.xml.rels", "xl/");
  const sections: string[] = [];
  for (const sheet of elements(zipText(zip, "xl/workbook.xml"), "sheet")) {
    const part = rels.get(attr(sheet.attrs, "r:id") ?? "");
    if (!part || !zip[part]) continue;
    const rows: string[] = [];
    for (const row of elements(zipText(zip, part), "row")) {
      const cells: string[] = [];
      for (const cell of elements(row.inner, "c")) {
        const value = cellText(cell, shared);
        if (value !== "") cells.push(value);
      }
      if (cells.length > 0) rows.push(cells.join("\t"));
    }
    const name = decodeXmlEntities(attr(sheet.attrs, "name") ?? "");
    if (rows.length > 0) sections.push(`${name}\n\n${rows.join("\n")}`);
  }
  return { title: coreTitle(zip), text: sections.join("\n\n") };
}

function cellText(cell: XmlElement, shared: string[]): string {
  const type = attr(cell.attrs, "t") ?? "n";
  const value = elements(cell.inner, "v")[0]?.inner;
  switch (type) {
    case "s":
      return value === undefined ? "" : (shared[Number(value)] ?? "");
    case "inlineStr":
      return elements(cell.inner, "is").map((is) => stringItemText(is.inner)).join("");
    case "str":
    case "n":
      return value === undefined ? "" : decodeXmlEntities(value).trim();
    default:
      return ""; // booleans and error values carry nothing worth searching
  }
}

/** The text of a shared or inline string: its <t> runs, without phonetic (<rPh>) hints. */
function stringItemText(xml: string): string {
  const withoutPhonetics = xml.replace(/<(\w+:)?rPh\b[\s\S]*?<\/(\w+:)?rPh>/g, "");
  const text = elements(withoutPhonetics, "t").map((t) => decodeXmlEntities(t.inner)).join("");
  return text.replace(/_x([0-9A-Fa-f]{4})_/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

// Unzipped parts live in ArrayBuffers, outside the worker's V8 heap limit: refuse zip bombs up front.
const MAX_UNZIPPED_BYTES = 512 * 1024 * 1024;

function openZip(bytes: Uint8Array, kind: string, wanted: (name: string) => boolean): Unzipped {
  let declared = 0;
  try {
    return unzipSync(bytes, {
      filter: (file) => {
        declared += file.originalSize;
        if (declared > MAX_UNZIPPED_BYTES) throw new ParseError(`${kind} file is too large when unzipped (over ${MAX_UNZIPPED_BYTES / 2 ** 20} MB)`);
        return wanted(file.name);
      },
    });
  } catch (err) {
    if (err instanceof ParseError) throw err;
    throw new ParseError(`Not a readable ${kind} file (not a valid zip package): ${messageOf(err)}`);
  }
}

function zipText(zip: Unzipped, name: string): string {
  const data = zip[name];
  return data ? new TextDecoder("utf-8").decode(data) : "";
}

/** Relationship id -> part name, resolved against baseDir ("ppt/", "xl/"). */
function relationships(zip: Unzipped, relsPart: string, baseDir: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const rel of elements(zipText(zip, relsPart), "Relationship")) {
    const id = attr(rel.attrs, "Id");
    const target = attr(rel.attrs, "Target");
    if (!id || !target || attr(rel.attrs, "TargetMode") === "External") continue;
    map.set(id, target.startsWith("/") ? target.slice(1) : normalisePartName(baseDir + target));
  }
  return map;
}

function normalisePartName(name: string): string {
  const out: string[] = [];
  for (const segment of name.split("/")) {
    if (segment === "..") out.pop();
    else if (segment !== "." && segment !== "") out.push(segment);
  }
  return out.join("/");
}

function coreTitle(zip: Unzipped): string | undefined {
  const title = elements(zipText(zip, "docProps/core.xml"), "dc:title")[0]?.inner;
  return title === undefined ? undefined : decodeXmlEntities(title);
}

// ---------------------------------------------------------------- tiny XML helpers

interface XmlElement {
  attrs: string;
  inner: string;
}

/**
 * Elements with the given qualified name (any namespace prefix accepted when the name has none
 * or a different one), in document order. Good enough for the flat OOXML parts read here;
 * elements of the same name must not nest.
 */
function elements(xml: string, qualifiedName: string): XmlElement[] {
  const local = qualifiedName.includes(":") ? qualifiedName.split(":")[1] : qualifiedName;
  const re = new RegExp(`<(?:[\\w.-]+:)?${local}(?=[\\s/>])([^>]*?)(?:/>|>([\\s\\S]*?)</(?:[\\w.-]+:)?${local}\\s*>)`, "g");
  const found: XmlElement[] = [];
  for (const match of xml.matchAll(re)) found.push({ attrs: match[1], inner: match[2] ?? "" });
  return found;
}

function attr(attrs: string, name: string): string | undefined {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const match = new RegExp(`(?:^|\\s)${escaped}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`).exec(attrs);
  return match ? decodeXmlEntities(match[1] ?? match[2]) : undefined;
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'", nbsp: "\u00a0" };

/** Decodes the XML predefined entities and numeric character references (and strips CDATA wrappers). */
export function decodeXmlEntities(text: string): string {
  return text
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, (_, data: string) => data.replace(/&/g, "&amp;"))
    .replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, ref: string) => {
      if (ref[0] === "#") {
        const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
      }
      return NAMED_ENTITIES[ref] ?? whole;
    });
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
