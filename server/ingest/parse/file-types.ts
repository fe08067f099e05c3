import type { ImageFormat } from "./formats/image";

/** The file formats Sluice can index, chosen by file-name extension (case-insensitive). */
export type FileFormat =
  | "text"
  | "markdown"
  | "json"
  | "html"
  | "pdf"
  | "docx"
  | "pptx"
  | "xlsx"
  | "odt"
  | "ods"
  | "odp"
  | "doc"
  | "xls"
  | "ppt"
  | "rtf"
  | "epub"
  | "eml"
  | "msg"
  | ImageFormat;

const FORMATS: Readonly<Record<string, FileFormat>> = {
  txt: "text",
  md: "markdown",
  markdown: "markdown",
  csv: "text",
  log: "text",
  json: "json",
  html: "html",
  htm: "html",
  xhtml: "html",
  pdf: "pdf",
  docx: "docx",
  docm: "docx",
  pptx: "pptx",
  pptm: "pptx",
  xlsx: "xlsx",
  xlsm: "xlsx",
  odt: "odt",
  ods: "ods",
  odp: "odp",
  doc: "doc",
  xls: "xls",
  ppt: "ppt",
  rtf: "rtf",
  epub: "epub",
  eml: "eml",
  msg: "msg",
  png: "png",
  jpg: "jpeg",
  jpeg: "jpeg",
  tif: "tiff",
  tiff: "tiff",
  bmp: "bmp",
  webp: "webp",
  gif: "gif",
};

const IMAGES: ReadonlySet<FileFormat> = new Set<ImageFormat>(["png", "jpeg", "tiff", "bmp", "webp", "gif"]);

/** Pictures, whose only text is what OCR reads in them. */
export function isImage(format: FileFormat | null): format is ImageFormat {
  return format !== null && IMAGES.has(format);
}

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

/** Plain text read as it is (streamed when big; see streamed-text-file.ts). */
export function isPlainText(format: FileFormat | null): boolean {
  return format === "text" || format === "markdown";
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
