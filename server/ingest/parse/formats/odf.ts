import { corruptFile, passwordProtected } from "../failures";
import { markupToText, type MarkupRules, type Separator } from "./markup-text";
import { firstText } from "./xml";
import { openZip, zipText } from "./zip-package";

// OpenDocument (ODT, ODS, ODP): a zip package whose content.xml holds the text and meta.xml the title.

const ODF_RULES: MarkupRules = {
  xmlMode: true,
  separators: new Map<string, Separator>([
    ["text:p", "\n"],
    ["text:h", "\n\n"],
    ["text:list-item", "\n"],
    ["text:tab", "\t"],
    ["text:line-break", "\n"],
    ["text:s", " "],
    ["text:note-body", "\n"],
    ["table:table", "\n\n"],
    ["table:table-row", "\n"],
    ["table:table-cell", "\t"],
    ["table:covered-table-cell", "\t"],
    ["draw:page", "\n\n"],
    ["draw:frame", "\n"],
    ["presentation:notes", "\n\n"],
  ]),
  // Tracked deletions and a footnote's number ("word¹" must not read "word1") are not text.
  skipped: new Set(["text:tracked-changes", "text:note-citation", "office:forms", "text:sequence-decls", "table:shapes"]),
  textIn: new Set(["text:p", "text:h"]),
};

/** A spreadsheet reads row by row, cells tab-separated, each sheet under its name. */
const ODS_RULES: MarkupRules = {
  ...ODF_RULES,
  separators: new Map([...ODF_RULES.separators, ["text:p", " "]]),
  label: (name, attrs) => (name === "table:table" ? attrs["table:name"] : undefined),
};

export function odfText(bytes: Uint8Array, what: "ODT" | "ODS" | "ODP"): { title?: string; text: string } {
  const zip = openZip(bytes, what, (name) => name === "content.xml" || name === "meta.xml" || name === "META-INF/manifest.xml");
  // An encrypted package keeps content.xml as ciphertext and says so in its manifest.
  if (zipText(zip, "META-INF/manifest.xml").includes("encryption-data")) throw passwordProtected(`${what} document`);
  if (!zip["content.xml"]) throw corruptFile(`${what} file`);
  const { text } = markupToText(zipText(zip, "content.xml"), what === "ODS" ? ODS_RULES : ODF_RULES);
  return { title: firstText(zipText(zip, "meta.xml"), "dc:title"), text };
}
