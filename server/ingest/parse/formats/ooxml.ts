import type { Unzipped } from "fflate";
import { corruptFile } from "../failures";
import type { TextSegment } from "../parse-types";
import { markupToText, type MarkupRules, type Separator } from "./markup-text";
import { attr, decodeXmlEntities, elements, firstText, type XmlElement } from "./xml";
import { normalisePartName, openZip, relationships, zipText } from "./zip-package";

// Office Open XML (DOCX, PPTX, XLSX): zip packages of XML parts, read with fflate.

/** The title in the package's core properties (docProps/core.xml dc:title), if any. */
function coreTitle(zip: Unzipped): string | undefined {
  return firstText(zipText(zip, "docProps/core.xml"), "dc:title");
}

const WORD_RULES: MarkupRules = {
  xmlMode: true,
  separators: new Map<string, Separator>([
    ["w:p", "\n"],
    ["w:tbl", "\n\n"],
    ["w:tr", "\n"],
    ["w:tc", "\t"],
    ["w:tab", "\t"],
    ["w:ptab", "\t"],
    ["w:br", "\n"],
    ["w:cr", "\n"],
    ["w:txbxContent", "\n\n"],
    ["w:footnote", "\n\n"],
    ["w:endnote", "\n\n"],
    ["w:comment", "\n\n"],
  ]),
  // Deleted revisions, field codes and the VML copy a text box keeps for old readers (mc:Fallback) are not the document's text.
  skipped: new Set(["w:delText", "w:instrText", "mc:Fallback", "w:del", "w:moveFrom"]),
  textIn: new Set(["w:t"]),
};

/**
 * All of a Word document's text: the body (text boxes and tables included), then footnotes,
 * endnotes and comments, then each distinct header and footer. Read from the XML parts directly:
 * mammoth's raw text leaves out headers and footers (its README: "ignored").
 */
export function docxText(bytes: Uint8Array): { title?: string; text: string } {
  const zip = openZip(bytes, "DOCX", (name) => name.startsWith("word/") ? name.endsWith(".xml") : name === "docProps/core.xml" || name === "_rels/.rels");
  const main = officeDocumentPart(zip) ?? "word/document.xml";
  if (!zip[main]) throw corruptFile("DOCX file");
  const dir = main.slice(0, main.lastIndexOf("/") + 1);
  const parts = [main, `${dir}footnotes.xml`, `${dir}endnotes.xml`, `${dir}comments.xml`];
  const numbered = (kind: string) =>
    Object.keys(zip)
      .filter((name) => new RegExp(`^${dir}${kind}\\d*\\.xml$`).test(name))
      .sort((a, b) => Number(/(\d*)\.xml$/.exec(a)?.[1] || 0) - Number(/(\d*)\.xml$/.exec(b)?.[1] || 0));
  const texts: string[] = [];
  const seen = new Set<string>();
  for (const part of [...parts, ...numbered("header"), ...numbered("footer")]) {
    if (!zip[part]) continue;
    const text = markupToText(zipText(zip, part), WORD_RULES).text.trim();
    // The same header on odd, even and first pages is one header.
    if (text && !seen.has(text)) texts.push(text);
    seen.add(text);
  }
  return { title: coreTitle(zip), text: texts.join("\n\n") };
}

/** The package's main part, from _rels/.rels (usually word/document.xml). */
function officeDocumentPart(zip: Unzipped): string | undefined {
  for (const rel of elements(zipText(zip, "_rels/.rels"), "Relationship")) {
    if (attr(rel.attrs, "Type")?.endsWith("/officeDocument")) return normalisePartName(attr(rel.attrs, "Target") ?? "");
  }
  return undefined;
}

export function pptxText(bytes: Uint8Array): { title?: string; text: string; segments: TextSegment[] } {
  const zip = openZip(bytes, "PPTX", (name) => name.endsWith(".xml") || name.endsWith(".rels"));
  const slideNames = slideOrder(zip);
  if (slideNames.length === 0 && !zip["ppt/presentation.xml"]) throw corruptFile("PPTX file");
  const slides = slideNames.map((name) => {
    const xml = zipText(zip, name);
    const paragraphs = elements(xml, "a:p").map((p) => elements(p.inner, "a:t").map((t) => decodeXmlEntities(t.inner)).join(""));
    return paragraphs.filter((p) => p.trim()).join("\n");
  });
  const segments = slides.map((text, i) => ({ text, page: i + 1, location: `slide ${i + 1}`, scanned: false }));
  return { title: coreTitle(zip), text: slides.filter((s) => s).join("\n\n"), segments };
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

export function xlsxText(bytes: Uint8Array): { title?: string; text: string; segments: TextSegment[] } {
  const zip = openZip(bytes, "XLSX", (name) => name.endsWith(".xml") || name.endsWith(".rels"));
  if (!zip["xl/workbook.xml"]) throw corruptFile("XLSX file");
  const shared = elements(zipText(zip, "xl/sharedStrings.xml"), "si").map((si) => stringItemText(si.inner));
  const rels = relationships(zip, "xl/_rels/workbook.xml.rels", "xl/");
  const sections: string[] = [];
  const segments: TextSegment[] = [];
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
    const name = attr(sheet.attrs, "name") ?? "";
    if (rows.length === 0) continue;
    sections.push(`${name}\n\n${rows.join("\n")}`);
    segments.push({ text: sections[sections.length - 1], page: null, location: `sheet ${name}`, scanned: false });
  }
  return { title: coreTitle(zip), text: sections.join("\n\n"), segments };
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
