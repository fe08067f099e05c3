/** The file formats Sluice can index, chosen by file-name extension (case-insensitive). */
export type FileFormat = "text" | "json" | "html" | "pdf" | "docx" | "pptx" | "xlsx";

const FORMATS: Readonly<Record<string, FileFormat>> = {
  txt: "text",
  md: "text",
  markdown: "text",
  csv: "text",
  log: "text",
  json: "json",
  html: "html",
  htm: "html",
  pdf: "pdf",
  docx: "docx",
  pptx: "pptx",
  xlsx: "xlsx",
};

/** The extension after the last dot of the base name, lower-cased; "" when there is none. */
export function extensionOf(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? "";
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : "";
}

/** The format of a file, or null when Sluice does not index files of its type. */
export function formatOf(fileName: string): FileFormat | null {
  return Object.hasOwn(FORMATS, extensionOf(fileName)) ? FORMATS[extensionOf(fileName)] : null;
}

/** Whether a file is worth reading at all; unsupported files are skipped without being read. */
export function isSupported(fileName: string): boolean {
  return formatOf(fileName) !== null;
}

/** The file's base name without its extension: the default title of a document. */
export function titleFromFileName(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? fileName;
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(0, dot) : base;
}
