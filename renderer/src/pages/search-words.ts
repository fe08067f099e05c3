import type { DocumentLocation } from "../api";

/** The file type filter: kinds of document a person names, each the extensions Sluice indexes for it (server/ingest/parse/file-types.ts). */
export const FILE_TYPES: { label: string; types: string[] }[] = [
  { label: "PDF", types: ["pdf"] },
  { label: "Word and text documents", types: ["docx", "docm", "doc", "odt", "rtf"] },
  { label: "Spreadsheets", types: ["xlsx", "xlsm", "xls", "ods", "csv"] },
  { label: "Presentations", types: ["pptx", "pptm", "ppt", "odp"] },
  { label: "Web pages", types: ["html", "htm", "xhtml"] },
  { label: "Plain text and Markdown", types: ["txt", "md", "markdown", "log", "json"] },
  { label: "Email", types: ["eml", "msg"] },
  { label: "E-books", types: ["epub"] },
];

/** The words and quoted phrases of a query, as the search reads them ("any of" lists these). */
export function queryWords(query: string): string[] {
  return [...query.matchAll(/"([^"]+)"|(\S+)/g)].map((m) => (m[1] ?? m[2]).trim()).filter((w) => w && w !== '"');
}

/** "“harbour”, “fog horn” or “zebra”" */
export function listOfWords(words: string[]): string {
  const quoted = words.map((w) => `“${w}”`);
  return quoted.length <= 1 ? (quoted[0] ?? "") : `${quoted.slice(0, -1).join(", ")} or ${quoted[quoted.length - 1]}`;
}

/** Each form of a location worth copying, named as its user knows it: the Windows path, the smb:// address, the local path. `name` is the label within a sentence. */
export function locationForms(location: DocumentLocation): { label: string; name: string; value: string }[] {
  const forms: { label: string; name: string; value: string }[] = [];
  if (location.path) {
    const windows = location.path.startsWith("\\\\");
    forms.push({ label: windows ? "Windows path" : "Path", name: windows ? "Windows path" : "path", value: location.path });
  }
  if (location.url) {
    const scheme = location.url.slice(0, location.url.indexOf(":")).toLowerCase();
    const [label, name] = scheme === "smb" ? ["Mac and Linux address", "Mac and Linux address"] : scheme === "file" ? ["File link", "file link"] : ["Link", "link"];
    forms.push({ label, name, value: location.url });
  }
  return forms;
}
