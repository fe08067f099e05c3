// Item: words never glued to a neighbour, and a document's real title (issue 14, items 4 and 7).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { extractText } from "../../server/ingest/parse/extract-text";
import { ParseError } from "../../server/ingest/parse/parse-types";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { courierWidth, helveticaWidth, makeBlankGlyphPdf, makeContentPdf, makeEncryptedPdf, makeLayoutPdf, makeTexLigaturePdf } from "../fixtures/documents";

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const words = (text: string): string[] => text.split(/\s+/).filter(Boolean);

async function rejectsWith(promise: Promise<unknown>, message: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => err instanceof ParseError && err.message === message);
}

describe("HTML to text", () => {
  it("separates words at block elements, table cells, list items and <br>, as innerText does", async () => {
    const html =
      "<html><head><title>Libpq</title></head><body><dl><dt><a href='#a'>Information</a></dt><dt>PQgetline</dt></dl>" +
      "<table><tr><td>cellone</td><td>celltwo</td></tr><tr><th>rowtwo</th></tr></table>" +
      "<ul><li>itemone</li><li>itemtwo</li></ul>before<br>after<div>divone</div><div>divtwo</div><p>para</p><h2>heading</h2>" +
      "<span>inline</span><b>bold</b>-joined</body></html>";
    const { text } = await extractText("page.html", utf8(html));
    assert.deepEqual(words(text), ["Information", "PQgetline", "cellone", "celltwo", "rowtwo", "itemone", "itemtwo", "before", "after", "divone", "divtwo", "para", "heading", "inlinebold-joined"]);
    assert.match(text, /cellone\tcelltwo/);
    assert.match(text, /before\nafter/);
  });

  it("collapses source whitespace but keeps <pre> as written; skips scripts, styles and the head", async () => {
    const html = "<head><style>p{}</style><script>var hidden = 1;</script></head><body><p>one\n   two</p><pre>a  b\n  c</pre><noscript>enable js</noscript></body>";
    const { text } = await extractText("p.html", utf8(html));
    assert.equal(text, "one two\n\na  b\n  c");
  });

  it("indexes a page whose only text is its <title> by that title", async () => {
    const { title, text } = await extractText("redirect.html", utf8("<html><head><title>Moved: Chapter 7</title><meta http-equiv=refresh content='0;url=x'></head><body></body></html>"));
    assert.equal(title, "Moved: Chapter 7");
    assert.equal(text, "Moved: Chapter 7");
  });

  it("takes the first <h1> as title when there is no <title>, and the file name when neither", async () => {
    assert.equal((await extractText("a.html", utf8("<body><p>x</p><h1>The <i>Real</i> Name</h1><h1>Second</h1></body>"))).title, "The Real Name");
    assert.equal((await extractText("dir/plain page.htm", utf8("<p>no heading</p>"))).title, "plain page");
  });

  it("decodes entities and keeps non-ASCII text", async () => {
    const { text, title } = await extractText("e.html", utf8("<title>R&amp;D &ndash; Zürich</title><p>caf&eacute; &lt;tag&gt; &#x263A;</p>"));
    assert.equal(title, "R&D – Zürich");
    assert.equal(text, "café <tag> ☺");
  });
});

describe("PDF to text", () => {
  it("starts a new line at another baseline, keeps cells and columns apart, and reads a line left to right", async () => {
    const width = await helveticaWidth("Information");
    const pdf = await makeLayoutPdf([
      { text: "Information", x: 56, y: 700 },
      { text: "PQgetline", x: 56 + width + 3, y: 700 },
      { text: "topright", x: 320, y: 650 },
      { text: "rightcol", x: 320, y: 636 },
      { text: "backleft", x: 56, y: 636 },
    ]);
    const { text } = await extractText("cols.pdf", pdf);
    // PDFium orders the runs of one baseline by position: the left column's line comes first.
    assert.deepEqual(words(text), ["Information", "PQgetline", "topright", "backleft", "rightcol"]);
    assert.match(text, /PQgetline\ntopright\nbackleft rightcol/);
  });

  it("separates a run in another font that starts just after the previous one, and joins a word hyphenated at a line end", async () => {
    const mono = await courierWidth("\\documentclass");
    const pdf = await makeLayoutPdf([
      { text: "loaded with", x: 56, y: 700 },
      { text: "\\documentclass", x: 120, y: 700, mono: true },
      { text: "or by the class", x: 120 + mono + 1.5, y: 700 }, // a narrow but visible space (0.14 em)
      { text: "The words were hyphen-", x: 56, y: 680 },
      { text: "ated across two lines.", x: 56, y: 666 },
    ]);
    const { text } = await extractText("tex.pdf", pdf);
    assert.match(text, /\\documentclass or by the class/);
    assert.match(text, /were hyphenated across two lines/);
  });

  it("separates runs in another type that barely leave a gap or overlap a little, but not ones set flush", async () => {
    // As in debian-reference.en.pdf ("secret-tool" overflowing into the next cell: "secret-toolstore"),
    // expex-doc.pdf ("\\ling" then "key" 0.8 pt on: "\\lingkey") and R-intro.pdf (subscript "p" then "x").
    const tool = await courierWidth("secret-tool");
    const ling = await courierWidth("\\ling");
    const x = await helveticaWidth("x");
    const p = await helveticaWidth("p", 7);
    const k = (await PDFDocument.create().then((d) => d.embedFont(StandardFonts.HelveticaBold))).widthOfTextAtSize("k", 11);
    const word = await helveticaWidth("word");
    const pdf = await makeLayoutPdf([
      { text: "secret-tool", x: 56, y: 700, mono: true },
      { text: "store and retrieve", x: 56 + tool - 0.6, y: 700 }, // 0.05 em into the monospaced run
      { text: "\\ling", x: 56, y: 680, mono: true },
      { text: "key", x: 56 + ling + 0.6, y: 680 }, // 0.05 em after it: less than the narrowest space
      { text: "x", x: 56, y: 660 },
      { text: "p", x: 56 + x, y: 658, size: 7 }, // a subscript flush with its symbol
      { text: "y", x: 56 + x + p + 0.5, y: 660 }, // TeX's \\scriptspace after it
      { text: "k", x: 56, y: 640, bold: true },
      { text: "ill all processes", x: 56 + k, y: 640 }, // a bold initial set flush: one word
      { text: "word", x: 56, y: 620 },
      { text: ", then", x: 56 + word - 0.3, y: 620, mono: true }, // punctuation in another type stays attached
    ]);
    const { text } = await extractText("types.pdf", pdf);
    assert.deepEqual(text.split("\n"), ["secret-tool store and retrieve", "\\ling key", "xp y", "kill all processes", "word, then"]);
  });

  it("starts a line where a table cell's next line begins under the end of the previous one", async () => {
    // As in debian-reference.en.pdf's package tables, where PDFium alone gave "init-system-helpersV:694".
    const width = await helveticaWidth("init-system-helpers", 10);
    const pdf = await makeLayoutPdf([
      { text: "init-system-helpers", x: 56, y: 700, size: 10 },
      { text: "V:694, I:961", x: 56 + width - 10, y: 694, size: 10 },
    ]);
    assert.equal((await extractText("table.pdf", pdf)).text, "init-system-helpers\nV:694, I:961");
  });

  it("reads the fi and fl ligatures of TeX fonts that have no Unicode map", async () => {
    const { text } = await extractText("ligatures.pdf", makeTexLigaturePdf());
    assert.match(text, /^file flow$/m);
  });

  it("reads the ligatures, quotes and dashes of TeX's T1 fonts that have no Unicode map, once the font shows a Latin-1 letter", async () => {
    // As jurarsp.pdf's bitmap fonts: "veröffentlicht" with ö at 0xF6 and the ff ligature at 0x1B, "konfigurieren" with fi at 0x1C.
    const t1 = makeContentPdf("BT /F1 12 Tf 56 700 Td (ver\\366\\033entlicht kon\\034gurieren \\022so\\020) Tj ET");
    assert.match((await extractText("t1.pdf", t1)).text, /^veröffentlicht konfigurieren „so“$/m);
    // Without such a letter the font is OT1: 0x1B is not a ligature there (it is œ), so it is not read as one.
    const ot1 = makeContentPdf("BT /F1 12 Tf 56 700 Td (\\014le e\\033ort) Tj ET");
    assert.match((await extractText("ot1.pdf", ot1)).text, /^file eort$/m);
  });

  it("keeps a line-end hyphen before a capital or where the document writes the compound, and joins it otherwise", async () => {
    const pdf = await makeLayoutPdf([
      { text: "wie üblich die quote-", x: 56, y: 700 },
      { text: "Umgebung benutzen; the non-", x: 56, y: 686 },
      { text: "branching version of a non-branching map, with de-", x: 56, y: 672 },
      { text: "faults, and Caption-", x: 56, y: 658 },
      { text: "Font as CaptionFont, in the PDF-", x: 56, y: 644 },
      { text: "Default case, and \\Declare-", x: 56, y: 630 },
      { text: "FloatingEnvironment offered by the page-", x: 56, y: 616 },
      { text: "builder; the page builder runs, a line-", x: 56, y: 602 },
      { text: "break and a linebreak", x: 56, y: 588 },
    ]);
    const { text } = await extractText("hyphens.pdf", pdf);
    assert.match(text, /die quote-Umgebung benutzen/);
    assert.match(text, /the non-branching version/);
    assert.match(text, /with defaults, and CaptionFont as/, "the document writes the word joined elsewhere");
    assert.match(text, /in the PDF-Default case/);
    assert.match(text, /\\DeclareFloatingEnvironment offered/, "a TeX control word is letters only");
    assert.match(text, /by the page-builder; the page builder runs/, "the document writes the two words apart elsewhere, never joined");
    assert.match(text, /a linebreak and a linebreak/, "written apart nowhere, joined elsewhere: joined");
  });

  it("starts a word at a glyph that draws nothing when it starts a space's width after the previous one", async () => {
    // reledpar's Greek "θαζζ vιβε": the Latin "v" has no glyph in the Greek font, so PDFium saw no space before it.
    assert.match((await extractText("blank.pdf", makeBlankGlyphPdf())).text, /^aa vaa$/m);
  });

  it("starts a line where one text object moves far back to the left on its baseline", async () => {
    // reledpar's measuring copy of a heading, drawn right of the page, then the body from the margin, in one TJ.
    const pdf = makeContentPdf("BT /F1 10 Tf 400 700 Td [(headline) 40000 (Some english text.)] TJ ET");
    assert.equal((await extractText("jump.pdf", pdf)).text, "headline\nSome english text.");
  });

  it("takes the metadata title, ignoring placeholders, else the first page's heading, else the file name", async () => {
    const body = [
      { text: "Annual Harbour Survey", x: 56, y: 720, size: 24 },
      { text: "Body text about the harbour in ordinary type.", x: 56, y: 690 },
      { text: "More body text in the same ordinary type.", x: 56, y: 676 },
    ];
    assert.equal((await extractText("a.pdf", await makeLayoutPdf(body, { title: "Survey 2026" }))).title, "Survey 2026");
    assert.equal((await extractText("a.pdf", await makeLayoutPdf(body, { title: "Microsoft Word - survey.docx" }))).title, "Annual Harbour Survey");
    assert.equal((await extractText("a.pdf", await makeLayoutPdf(body))).title, "Annual Harbour Survey");
    const uniform = body.map((run) => ({ ...run, size: 11 }));
    assert.equal((await extractText("dir/scan 7.pdf", await makeLayoutPdf(uniform, { title: "Untitled" }))).title, "scan 7");
  });

  // A scan with no text layer is read by OCR now, or skipped with OCR=off: test/unit/ocr.test.ts.
  it("says a PDF is password-protected", async () => {
    await rejectsWith(extractText("locked.pdf", makeEncryptedPdf()), "password-protected PDF");
  });

  it("a PDF with neither text nor images is empty (skipped later), unless its title can stand for it", async () => {
    assert.equal((await extractText("blank.pdf", await makeLayoutPdf([]))).text, "");
    assert.equal((await extractText("blank.pdf", await makeLayoutPdf([], { title: "Cover sheet" }))).text, "Cover sheet");
  });
});

describe("Markdown titles", () => {
  it("takes the first level-1 heading near the top", async () => {
    assert.equal((await extractText("n.md", utf8("# Release notes\n\nbody"))).title, "Release notes");
    assert.equal((await extractText("n.md", utf8("---\nlayout: x\n---\n# Front matter first #\n"))).title, "Front matter first");
    assert.equal((await extractText("notes.md", utf8("## only a second-level heading\nbody"))).title, "notes");
    assert.equal((await extractText("plain.txt", utf8("# not markdown"))).title, "plain");
  });
});
