import { getDocumentProxy, getMeta, getResolvedPDFJS } from "unpdf";
import { corruptFile, passwordProtected, scannedPdf } from "../failures";
import { ParseError } from "../parse-types";

type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>;

/** What pdf.js's getTextContent gives for a run of text (marked-content items have no `str`). */
interface TextRun {
  str: string;
  transform: number[];
  width: number;
  height: number;
  hasEOL: boolean;
}

/** A line of the first page, with the tallest glyph height on it: the title heuristic's input. */
interface Line {
  text: string;
  height: number;
}

/**
 * A PDF's text, page by page, with the breaks pdf.js's text runs imply put back: a run that
 * starts on another line (its baseline moved), or back at the left after a column, begins a new
 * line; one that starts well after the previous run's end gets a space. So words on adjacent
 * lines or table columns never run together. Title: the document's Title metadata, unless it is
 * a placeholder ("Untitled", "Microsoft Word - x.doc"), else the first page's heading (its
 * largest text, when clearly larger than the body's).
 */
export async function pdfText(bytes: Uint8Array): Promise<{ title?: string; text: string }> {
  let pdf: PdfDocument;
  try {
    // pdf.js may take ownership of (detach) the array it is given; give it its own copy of the view.
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 }); // 0: errors only, no console noise
  } catch (err) {
    // unpdf bundles its own pdf.js, whose exception classes it does not export for instanceof;
    // pdf.js gives each one a stable `name` ("PasswordException", "InvalidPDFException", ...).
    if ((err as { name?: string } | null)?.name === "PasswordException") throw passwordProtected("PDF");
    throw corruptFile("PDF");
  }
  try {
    const pages: string[] = [];
    let firstPageLines: Line[] = [];
    for (let number = 1; number <= pdf.numPages; number++) {
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      // A page's parsed resources (fonts, operator lists) are kept until the document is
      // destroyed unless released: a PDF of hundreds of pages would hold them all at once.
      page.cleanup();
      const runs = (content.items as Array<Partial<TextRun>>).filter((item): item is TextRun => typeof item.str === "string");
      const lines = layoutLines(runs);
      if (number === 1) firstPageLines = lines;
      pages.push(lines.map((line) => line.text).join("\n"));
    }
    const text = pages.join("\n\n");
    if (!/\S/.test(text) && pdf.numPages > 0 && (await hasImages(pdf))) throw scannedPdf();
    return { title: (await metadataTitle(pdf)) ?? headingOf(firstPageLines), text };
  } catch (err) {
    if (err instanceof ParseError) throw err;
    throw corruptFile("PDF");
  } finally {
    await pdf.destroy().catch(() => undefined);
  }
}

/** Lines of text from a page's runs, in content order, with spaces where runs stand apart. */
function layoutLines(runs: TextRun[]): Line[] {
  const lines: Line[] = [];
  let current: Line | null = null;
  let previous: { x: number; y: number; end: number; size: number } | null = null;
  let breakPending = false;
  for (const run of runs) {
    const [a, b, , , x, y] = run.transform;
    const size = run.height || Math.hypot(a, b) || 1;
    if (run.str !== "") {
      let startsLine = current === null || breakPending;
      let space = false;
      if (!startsLine && previous) {
        const scale = Math.max(size, previous.size);
        if (Math.abs(y - previous.y) > scale * 0.5) startsLine = true; // another baseline
        else if (x < previous.end - scale) startsLine = true; // back to the left on the same baseline: a new column's line
        else if (x - previous.end > scale * 0.15) space = true; // a visible gap: a word or cell boundary
      }
      if (startsLine || current === null) {
        current = { text: run.str, height: size };
        lines.push(current);
      } else {
        const glue = space && !/\s$/.test(current.text) && !/^\s/.test(run.str) ? " " : "";
        current.text += glue + run.str;
        current.height = Math.max(current.height, size);
      }
      breakPending = false;
      previous = { x, y, end: x + run.width, size };
    }
    if (run.hasEOL) breakPending = true;
  }
  return lines;
}

/** Whether the first pages draw images: a page of pictures and no text is a scan. */
async function hasImages(pdf: PdfDocument): Promise<boolean> {
  const { OPS } = await getResolvedPDFJS();
  const imageOps = new Set<number>([OPS.paintImageXObject, OPS.paintInlineImageXObject, OPS.paintImageMaskXObject, OPS.paintImageXObjectRepeat, OPS.paintInlineImageXObjectGroup]);
  for (let number = 1; number <= Math.min(pdf.numPages, 3); number++) {
    const page = await pdf.getPage(number);
    const ops = await page.getOperatorList();
    page.cleanup();
    if (ops.fnArray.some((op) => imageOps.has(op))) return true;
  }
  return false;
}

/** Titles that tools write when the author gave none: not worth showing instead of the file name. */
const PLACEHOLDER_TITLE = /^(untitled|title|document|slide ?\d*|microsoft (word|powerpoint|excel) - .*|.*\.(docx?|pptx?|xlsx?|pdf|rtf|odt|tex|dvi|indd|qxd|ps|eps))$/i;

async function metadataTitle(pdf: PdfDocument): Promise<string | undefined> {
  try {
    const title: unknown = (await getMeta(pdf)).info?.Title;
    if (typeof title !== "string") return undefined;
    const clean = title.replace(/\s+/g, " ").trim();
    return clean && !PLACEHOLDER_TITLE.test(clean) ? clean : undefined;
  } catch {
    return undefined; // broken metadata does not make the text unreadable
  }
}

/**
 * The first page's heading: the first line set in its largest type, when that type is at least
 * 1.3 times the page's most common size (so a page of uniform text has no heading) and the line
 * reads like a title (2 to 200 characters, some letters).
 */
function headingOf(lines: Line[]): string | undefined {
  if (lines.length < 2) return undefined;
  const counts = new Map<number, number>();
  for (const line of lines) counts.set(Math.round(line.height), (counts.get(Math.round(line.height)) ?? 0) + line.text.length);
  const bodySize = [...counts.entries()].sort((x, y) => y[1] - x[1])[0][0];
  const largest = Math.max(...lines.map((line) => line.height));
  if (largest < bodySize * 1.3) return undefined;
  const text = lines.find((line) => line.height === largest)?.text.replace(/\s+/g, " ").trim() ?? "";
  return text.length >= 2 && text.length <= 200 && /\p{L}/u.test(text) ? text : undefined;
}
