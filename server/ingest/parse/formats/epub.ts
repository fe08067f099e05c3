import { posix } from "node:path";
import { corruptFile, passwordProtected } from "../failures";
import { HTML_RULES, markupToText } from "./markup-text";
import { attr, elements, firstText } from "./xml";
import { normalisePartName, openZip, zipText } from "./zip-package";

const CONTENT = /\.(x?html?|opf|ncx|xml)$/i;

/**
 * An EPUB book: its chapters (XHTML) in reading order (the OPF spine), each through the HTML
 * path; its title from the OPF's dc:title. Images, fonts and styles are never inflated.
 */
export function epubText(bytes: Uint8Array): { title?: string; text: string } {
  const zip = openZip(bytes, "EPUB", (name) => CONTENT.test(name));
  const opfPath = attr(elements(zipText(zip, "META-INF/container.xml"), "rootfile")[0]?.attrs ?? "", "full-path");
  if (!opfPath || !zip[opfPath]) throw corruptFile("EPUB book");
  // Font obfuscation also lists files in encryption.xml; DRM encrypts the chapters themselves.
  const encrypted = elements(zipText(zip, "META-INF/encryption.xml"), "CipherReference").some((ref) => /\.x?html?$/i.test(attr(ref.attrs, "URI") ?? ""));
  if (encrypted) throw passwordProtected("EPUB book (DRM)");
  const opf = zipText(zip, opfPath);
  const base = posix.dirname(opfPath);
  const hrefs = new Map<string, string>();
  for (const item of elements(opf, "item")) {
    const id = attr(item.attrs, "id");
    const href = attr(item.attrs, "href");
    if (id && href) hrefs.set(id, normalisePartName(`${base === "." ? "" : `${base}/`}${safeDecode(href.split("#")[0])}`));
  }
  const chapters: string[] = [];
  for (const ref of elements(opf, "itemref")) {
    const part = hrefs.get(attr(ref.attrs, "idref") ?? "");
    if (!part || !zip[part]) continue;
    const text = markupToText(zipText(zip, part), HTML_RULES).text.trim();
    if (text) chapters.push(text);
  }
  return { title: firstText(opf, "dc:title"), text: chapters.join("\n\n") };
}

function safeDecode(href: string): string {
  try {
    return decodeURIComponent(href);
  } catch {
    return href;
  }
}
