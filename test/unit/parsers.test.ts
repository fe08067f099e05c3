import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { strToU8, unzipSync, zipSync } from "fflate";
import { extractText } from "../../server/ingest/parse/extract-text";
import { formatOf, isSupported } from "../../server/ingest/parse/file-types";
import { ParseError } from "../../server/ingest/parse/parse-types";
import { makeDocx, makePdf, makePptx, makeXlsx } from "../fixtures/documents";

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

async function rejectsWithParseError(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ParseError, `expected ParseError, got ${String(err)}`);
    assert.match(err.message, pattern);
    return true;
  });
}

describe("file types", () => {
  it("supports the indexed formats, case-insensitively, and nothing else", () => {
    const supported = ["a.txt", "b.MD", "c.markdown", "d.csv", "e.json", "f.HTML", "g.htm", "h.pdf", "i.Docx", "j.pptx", "k.xlsx", "dir/x.y/l.txt"];
    supported.push("m.odt", "n.ODS", "o.odp", "p.doc", "q.xls", "r.ppt", "s.rtf", "t.epub", "u.eml", "v.msg", "w.xhtml");
    // Pictures, read by OCR.
    supported.push("a.png", "b.JPG", "c.jpeg", "d.tif", "e.tiff", "f.bmp", "g.webp", "h.gif");
    for (const name of supported) assert.ok(isSupported(name), name);
    for (const name of ["d.heic", "e.exe", "README", ".txt", "f.txt.bak", "g.pdf/", "x.y/readme", "h.zip", "i.pages"]) {
      assert.ok(!isSupported(name), name);
    }
    assert.equal(formatOf("notes.Markdown"), "markdown");
    assert.equal(formatOf("log.csv"), "text");
    assert.equal(formatOf("page.htm"), "html");
  });

  it("refuses to extract an unsupported type", async () => {
    await rejectsWithParseError(extractText("photo.heic", new Uint8Array([0x89, 0x50])), /Unsupported file type: \.heic/);
  });
});

describe("extractText", () => {
  it("reads UTF-8 text with non-ASCII characters and strips the BOM; title is the file name", async () => {
    const phrase = "Grüße aus Zürich — 東京の天気 — naïve café 🚀";
    const result = await extractText("notes/Reise Plan.txt", new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(phrase)]));
    assert.deepEqual(result, { title: "Reise Plan", text: phrase });
  });

  it("falls back to latin1 when the bytes are not valid UTF-8", async () => {
    const latin1 = Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x6e, 0x61, 0xef, 0x76, 0x65]); // "café naïve"
    assert.equal((await extractText("old.csv", latin1)).text, "café naïve");
  });

  it("reads markdown and csv as text", async () => {
    assert.equal((await extractText("a.md", utf8("# Heading\n\nplatypus body"))).text, "# Heading\n\nplatypus body");
    assert.match((await extractText("a.csv", utf8("name,animal\nann,axolotl\n"))).text, /ann,axolotl/);
  });

  it("makes JSON keys and string values searchable", async () => {
    const json = JSON.stringify({ project: { codename: "Nightjar", tags: ["alpha", { region: "Zürich" }] }, count: 42, ok: true, none: null });
    const { text, title } = await extractText("config.json", utf8(json));
    assert.equal(title, "config");
    for (const expected of ["project:", "codename: Nightjar", "tags:", "alpha", "region: Zürich", "count: 42", "ok: true"]) {
      assert.ok(text.includes(expected), `${expected} in ${text}`);
    }
    await rejectsWithParseError(extractText("broken.json", utf8("{\"a\": ")), /^corrupt file \(not a valid JSON document\)$/);
  });

  it("reads HTML text without markup or scripts, with the <title> as title", async () => {
    const html = `<!doctype html><html><head><title>Quarterly &amp; Annual Report</title><style>p{color:red}</style>
      <script>var secretScript = 1;</script></head><body><h1>Results</h1><p>The <b>marmoset</b> index rose &gt; 5%.</p>
      <a href="https://example.com/x">details</a><img src="a.png" alt="pic"></body></html>`;
    const { title, text } = await extractText("report.html", utf8(html));
    assert.equal(title, "Quarterly & Annual Report");
    assert.match(text, /The marmoset index rose > 5%\./);
    assert.match(text, /details/);
    assert.doesNotMatch(text, /secretScript|color:red|example\.com|<b>/);
  });

  it("reads a PDF's text across pages and its Title metadata", async () => {
    const paragraphs = Array.from({ length: 120 }, (_, i) => `Paragraph ${i} talks about the quiet harbour of Valparaiso at dusk.`);
    paragraphs.push("The distinctive phrase is ultramarine pelican.");
    const pdf = await makePdf(paragraphs, { title: "Harbour Notes" });
    const { title, text } = await extractText("harbour.pdf", pdf);
    assert.equal(title, "Harbour Notes");
    assert.match(text, /Paragraph 0 talks about the quiet harbour/);
    assert.match(text, /ultramarine pelican/);
    const untitled = await extractText("untitled.pdf", await makePdf(["just text"]));
    assert.equal(untitled.title, "untitled");
  });

  it("reads a DOCX's paragraphs", async () => {
    const docx = await makeDocx(["First paragraph about tapirs.", "Second one: <angle> & ampersand, Ærøskøbing."]);
    const { title, text } = await extractText("Tapirs.docx", docx);
    assert.equal(title, "Tapirs");
    assert.match(text, /First paragraph about tapirs\./);
    assert.match(text, /Second one: <angle> & ampersand, Ærøskøbing\./);
  });

  it("reads a PPTX's text runs slide by slide, in presentation order", async () => {
    const pptx = makePptx([["Agenda", "Budget & <risks>"], ["Second slide mentions the narwhal"], ["Third"]]);
    const { text } = await extractText("deck.pptx", pptx);
    assert.equal(text, "Agenda\nBudget & <risks>\n\nSecond slide mentions the narwhal\n\nThird");
  });

  it("keeps which slide and which sheet each part is, for the chunks' locations", async () => {
    const deck = await extractText("deck.pptx", makePptx([["Agenda"], ["Second slide mentions the narwhal"]]));
    assert.deepEqual(deck.segments, [
      { text: "Agenda", page: 1, location: "slide 1", scanned: false },
      { text: "Second slide mentions the narwhal", page: 2, location: "slide 2", scanned: false },
    ]);
    const book = await extractText("stock.xlsx", makeXlsx({ Inventory: [["wombat plush", 12]], Budget: [["ferry", 40]] }));
    assert.deepEqual(book.segments?.map((s) => [s.page, s.location]), [[null, "sheet Inventory"], [null, "sheet Budget"]]);
    const pdf = await extractText("two.pdf", await makePdf(["First page text.", "x ".repeat(3000)]));
    assert.deepEqual(pdf.segments?.map((s) => [s.page, s.location, s.scanned]).slice(0, 2), [[1, "page 1", false], [2, "page 2", false]]);
  });

  it("reads an XLSX's shared strings, inline strings and numbers row by row, under sheet names", async () => {
    const sheets = { Inventory: [["item", "count"], ["wombat plush", 12], ["price", 3.75]], "Q&A": [["answer", 42]] };
    const shared = await extractText("stock.xlsx", makeXlsx(sheets));
    assert.equal(shared.text, "Inventory\n\nitem\tcount\nwombat plush\t12\nprice\t3.75\n\nQ&A\n\nanswer\t42");
    const inline = await extractText("stock.xlsx", makeXlsx(sheets, { inlineStrings: true }));
    assert.equal(inline.text, shared.text);
  });

  it("takes an Office document's title from docProps/core.xml and decodes entities there", async () => {
    const withCore = zipSync({
      ...unzipSync(makePptx([["body text"]])),
      "docProps/core.xml": strToU8(
        '<cp:coreProperties xmlns:cp="x" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>R&amp;D &#x263A; plan</dc:title></cp:coreProperties>',
      ),
    });
    assert.equal((await extractText("deck.pptx", withCore)).title, "R&D ☺ plan");
  });

  it("throws ParseError worded for a user for corrupt PDF, DOCX, PPTX and XLSX files", async () => {
    const garbage = utf8("this is not really a document at all, just some bytes");
    await rejectsWithParseError(extractText("a.pdf", garbage), /^corrupt file \(not a valid PDF\)$/);
    await rejectsWithParseError(extractText("a.docx", garbage), /^corrupt file \(not a valid DOCX file\)$/);
    await rejectsWithParseError(extractText("a.pptx", garbage), /^corrupt file \(not a valid PPTX file\)$/);
    await rejectsWithParseError(extractText("a.xlsx", garbage), /^corrupt file \(not a valid XLSX file\)$/);
    const pdf = await makePdf(["truncated"]);
    await rejectsWithParseError(extractText("cut.pdf", pdf.slice(0, 40)), /^corrupt file \(not a valid PDF\)$/);
    const docx = await makeDocx(["truncated"]);
    await rejectsWithParseError(extractText("cut.docx", docx.slice(0, docx.length - 30)), /^corrupt file \(not a valid DOCX file\)$/);
    const notWorkbook = zipSync({ "hello.txt": strToU8("hi") });
    await rejectsWithParseError(extractText("zip.xlsx", notWorkbook), /^corrupt file \(not a valid XLSX file\)$/);
    await rejectsWithParseError(extractText("zip.docx", notWorkbook), /^corrupt file \(not a valid DOCX file\)$/);
  });

  it("refuses an Office file that claims a huge uncompressed size (zip bomb) without inflating it", async () => {
    const xlsx = makeXlsx({ Sheet: [["tiny"]] });
    const view = new DataView(xlsx.buffer, xlsx.byteOffset, xlsx.byteLength);
    for (let i = 0; i + 4 <= xlsx.byteLength; i++) {
      if (view.getUint32(i, true) === 0x02014b50) view.setUint32(i + 24, 0x7fffffff, true); // central directory: uncompressed size
    }
    await rejectsWithParseError(extractText("bomb.xlsx", xlsx), /too large when unzipped/);
  });
});
