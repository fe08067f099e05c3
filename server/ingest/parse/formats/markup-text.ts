import { Parser } from "htmlparser2";

/**
 * What an element does to the text around it, as a browser's innerText treats it: a paragraph
 * break ("\n\n"), a line break ("\n"), a cell or tab ("\t"), a space (" "), or nothing (inline).
 */
export type Separator = "\n\n" | "\n" | "\t" | " ";

export interface MarkupRules {
  xmlMode: boolean;
  /** The separator an element puts before and after its content; undefined for inline elements. */
  separators: ReadonlyMap<string, Separator>;
  /** Elements whose content is not text (scripts, deleted runs, fallbacks that repeat content). */
  skipped: ReadonlySet<string>;
  /** When set, only text inside one of these elements counts (XML formats, where whitespace between tags is layout). */
  textIn?: ReadonlySet<string>;
  /** Elements whose content keeps its line breaks and spaces (HTML <pre>). */
  preformatted?: ReadonlySet<string>;
  /** Elements whose text is the document's title (HTML <title>); read even inside skipped elements. */
  titleIn?: ReadonlySet<string>;
  /** Text to put before an element's content, from its attributes (a spreadsheet's sheet name). */
  label?: (name: string, attrs: Record<string, string>) => string | undefined;
  /** Elements whose first occurrence's text is the title when no titleIn element gives one (HTML <h1>). */
  headingIn?: ReadonlySet<string>;
}

export interface MarkupText {
  text: string;
  /** The titleIn element's text, else the first headingIn element's, whitespace collapsed; "" when none. */
  title: string;
}

const RANK: Readonly<Record<Separator, number>> = { " ": 1, "\t": 2, "\n": 3, "\n\n": 4 };

/**
 * Text of an HTML or XML document in one streaming pass (htmlparser2, no DOM): words inside one
 * element run on, and block elements, cells and breaks separate them, the way a browser's
 * innerText does, so "<dt>a</dt><dt>b</dt>" reads "a\nb", never "ab". Runs of whitespace in
 * the source collapse to one space (except in preformatted elements); separators never pile up:
 * the strongest one pending between two words wins.
 */
export function markupToText(source: string, rules: MarkupRules): MarkupText {
  const out: string[] = [];
  let pending: Separator | null = null;
  let skipDepth = 0;
  let textDepth = 0;
  let preDepth = 0;
  let titleDepth = 0;
  let title = "";
  let headingDepth = 0;
  let heading: string | null = null;
  let headingDone = false;

  const separate = (sep: Separator | undefined): void => {
    if (sep && (pending === null || RANK[sep] > RANK[pending])) pending = sep;
  };
  const emit = (text: string): void => {
    if (pending !== null && out.length > 0) out.push(pending);
    pending = null;
    out.push(text);
  };
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (rules.skipped.has(name)) skipDepth++;
        if (rules.textIn?.has(name)) textDepth++;
        if (rules.preformatted?.has(name)) preDepth++;
        if (rules.titleIn?.has(name)) titleDepth++;
        if (rules.headingIn?.has(name) && !headingDone) {
          headingDepth++;
          heading ??= "";
        }
        separate(rules.separators.get(name));
        if (skipDepth === 0 && rules.label) {
          const label = rules.label(name, attrs);
          if (label) {
            emit(label);
            separate("\n\n");
          }
        }
      },
      ontext(raw) {
        if (titleDepth > 0) title += raw;
        if (skipDepth > 0 || (rules.textIn && textDepth === 0)) return;
        if (headingDepth > 0) heading += raw;
        if (preDepth > 0) {
          if (raw) emit(raw);
          return;
        }
        const text = raw.replace(/\s+/g, " ");
        if (text === " ") {
          separate(" ");
          return;
        }
        if (text === "") return;
        if (text.startsWith(" ")) separate(" ");
        emit(text.trim());
        if (text.endsWith(" ")) separate(" ");
      },
      onclosetag(name) {
        // htmlparser2 calls onclosetag for every element it closes, implied ones included, so depths stay balanced.
        if (rules.skipped.has(name)) skipDepth = Math.max(0, skipDepth - 1);
        if (rules.textIn?.has(name)) textDepth = Math.max(0, textDepth - 1);
        if (rules.preformatted?.has(name)) preDepth = Math.max(0, preDepth - 1);
        if (rules.titleIn?.has(name)) titleDepth = Math.max(0, titleDepth - 1);
        if (rules.headingIn?.has(name) && headingDepth > 0) {
          headingDepth--;
          if (headingDepth === 0 && heading?.trim()) headingDone = true;
          else if (headingDepth === 0) heading = null;
        }
        separate(rules.separators.get(name));
      },
    },
    { xmlMode: rules.xmlMode, decodeEntities: true, recognizeSelfClosing: true, lowerCaseTags: !rules.xmlMode },
  );
  parser.end(source);
  const collapse = (s: string): string => s.replace(/\s+/g, " ").trim();
  return { text: out.join(""), title: collapse(title) || collapse(heading ?? "") };
}

const HTML_PARAGRAPHS = ["p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "table", "ul", "ol", "dl", "hr", "figure", "section", "article", "header", "footer", "aside", "nav", "main", "details", "address"];
const HTML_LINES = [
  "html", "body", "div", "li", "dt", "dd", "tr", "caption", "thead", "tbody", "tfoot", "form", "fieldset", "legend", "figcaption",
  "hgroup", "summary", "dialog", "option", "optgroup", "select", "center", "menu", "dir", "noframes", "frameset", "search",
  "br", "textarea", "button", "label", "video", "audio", "canvas", "iframe", "object", "embed", "input",
];

/** HTML (and the XHTML of EPUB books): what a browser shows, its <title> as title, else its first <h1>. */
export const HTML_RULES: MarkupRules = {
  xmlMode: false,
  separators: new Map<string, Separator>([
    ...HTML_PARAGRAPHS.map((n) => [n, "\n\n"] as const),
    ...HTML_LINES.map((n) => [n, "\n"] as const),
    ["td", "\t"],
    ["th", "\t"],
    ["img", " "],
  ]),
  skipped: new Set(["head", "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "select", "title"]),
  preformatted: new Set(["pre", "textarea", "listing", "xmp", "plaintext"]),
  titleIn: new Set(["title"]),
  headingIn: new Set(["h1"]),
};

/** The text of an HTML page and its title (<title>, else the first <h1>). */
export function htmlText(html: string): { title?: string; text: string } {
  const { text, title } = markupToText(html, HTML_RULES);
  return { title: title || undefined, text };
}
