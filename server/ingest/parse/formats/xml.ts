// Small helpers for the flat, machine-written XML parts of Office packages (OOXML, OPF, ODF meta).

export interface XmlElement {
  attrs: string;
  inner: string;
}

/**
 * Elements with the given qualified name (any namespace prefix accepted when the name has none
 * or a different one), in document order. Good enough for the flat parts read with it;
 * elements of the same name must not nest.
 */
export function elements(xml: string, qualifiedName: string): XmlElement[] {
  const local = qualifiedName.includes(":") ? qualifiedName.split(":")[1] : qualifiedName;
  const re = new RegExp(`<(?:[\\w.-]+:)?${local}(?=[\\s/>])([^>]*?)(?:/>|>([\\s\\S]*?)</(?:[\\w.-]+:)?${local}\\s*>)`, "g");
  const found: XmlElement[] = [];
  for (const match of xml.matchAll(re)) found.push({ attrs: match[1], inner: match[2] ?? "" });
  return found;
}

/** An attribute's decoded value; `name` may carry a prefix ("r:id"). */
export function attr(attrs: string, name: string): string | undefined {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const match = new RegExp(`(?:^|\\s)${escaped}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`).exec(attrs);
  return match ? decodeXmlEntities(match[1] ?? match[2]) : undefined;
}

/** The text of the first element of that name, tags inside it removed, or undefined. */
export function firstText(xml: string, qualifiedName: string): string | undefined {
  const inner = elements(xml, qualifiedName)[0]?.inner;
  return inner === undefined ? undefined : decodeXmlEntities(inner.replace(/<[^>]*>/g, ""));
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
