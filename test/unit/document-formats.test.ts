// The formats organisations keep (issue 14, item 5): OpenDocument, EPUB, RTF, e-mail, whole
// DOCX, and legacy Office files written by a real office suite (LibreOffice, committed).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { strToU8, zipSync } from "fflate";
import { extractText } from "../../server/ingest/parse/extract-text";
import { ParseError } from "../../server/ingest/parse/parse-types";
import { makeDocx, makeEml, makeEpub, makeMsg, makeOdp, makeOds, makeOdt, makeRichDocx } from "../fixtures/documents";
import { readOfficeFile } from "../fixtures/office-files";

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const garbage = utf8("this is not really a document at all, just some bytes");

async function rejectsWith(promise: Promise<unknown>, message: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ParseError, String(err));
    assert.equal(err.message, message);
    return true;
  });
}

describe("DOCX read whole", () => {
  it("reads tables, text boxes (once, not their fallback copy), headers, footers and footnotes", async () => {
    const docx = makeRichDocx({ body: "Body about lemurs", cells: ["cellone", "celltwo"], textBox: "boxed kestrel", header: "header gannet", footer: "footer puffin", footnote: "footnote shrike" });
    const { text, title } = await extractText("Rich.docx", docx);
    assert.equal(title, "Rich");
    for (const phrase of ["Body about lemurs", "cellone", "celltwo", "boxed kestrel", "header gannet", "footer puffin", "footnote shrike"]) assert.ok(text.includes(phrase), `${phrase} in ${text}`);
    assert.equal(text.split("boxed kestrel").length, 2, "the text box is read once");
    assert.equal(text.split("header gannet").length, 2, "the same header on two page kinds is read once");
    assert.doesNotMatch(text, /cellonecelltwo/);
  });

  it("takes the title from the core properties; a DOCX with no body text is indexed by that title", async () => {
    assert.equal((await extractText("x.docx", makeRichDocx({ body: "text", title: "Board Minutes" }))).title, "Board Minutes");
    assert.deepEqual(await extractText("x.docx", makeRichDocx({ title: "Cover Letter Template" })), { title: "Cover Letter Template", text: "Cover Letter Template" });
    assert.equal((await extractText("empty.docx", makeRichDocx({}))).text, "");
  });

  it("reads the plain paragraphs the other generator writes too", async () => {
    assert.match((await extractText("a.docx", await makeDocx(["one paragraph", "two paragraph"]))).text, /one paragraph\ntwo paragraph/);
  });

  it("says a password-protected Office 2007+ file is one (an encrypted package inside a compound file)", async () => {
    const CFB = (await import("cfb")).default;
    const container = CFB.utils.cfb_new();
    CFB.utils.cfb_add(container, "/EncryptionInfo", Buffer.alloc(64));
    CFB.utils.cfb_add(container, "/EncryptedPackage", Buffer.alloc(4096));
    const bytes = new Uint8Array(CFB.write(container, { type: "buffer" }) as Buffer);
    await rejectsWith(extractText("secret.docx", bytes), "password-protected Word document");
    await rejectsWith(extractText("secret.xlsx", bytes), "password-protected Excel workbook");
  });
});

describe("OpenDocument", () => {
  it("reads an ODT's headings and paragraphs, tabs, line breaks and spaces, without footnote numbers, and its title", async () => {
    const odt = makeOdt(
      ["# Harbour report", "The quokka census.", { xml: '<text:p>tab<text:tab/>sep<text:line-break/>next<text:s text:c="3"/>line word<text:note><text:note-citation>1</text:note-citation><text:note-body><text:p>note body</text:p></text:note-body></text:note></text:p>' }],
      { title: "Quarterly Harbour Report" },
    );
    const { title, text } = await extractText("r.odt", odt);
    assert.equal(title, "Quarterly Harbour Report");
    assert.equal(text, "Harbour report\n\nThe quokka census.\ntab\tsep\nnext line word\nnote body");
  });

  it("reads an ODS sheet by sheet, row by row, cells tab-separated", async () => {
    const { text } = await extractText("s.ods", makeOds({ Inventory: [["item", "count"], ["wombat plush", 12]], "Q&A": [["answer", 42]] }));
    assert.equal(text, "Inventory\n\nitem\tcount\nwombat plush\t12\n\nQ&A\n\nanswer\t42");
  });

  it("reads an ODP slide by slide", async () => {
    const { text, title } = await extractText("deck.odp", makeOdp([["Agenda", "Budget"], ["The narwhal slide"]], { title: "Deck" }));
    assert.equal(title, "Deck");
    assert.equal(text, "Agenda\nBudget\n\nThe narwhal slide");
  });

  it("says an encrypted or broken OpenDocument file is one", async () => {
    await rejectsWith(extractText("s.odt", makeOdt(["secret"], { encrypted: true })), "password-protected ODT document");
    await rejectsWith(extractText("b.ods", garbage), "corrupt file (not a valid ODS file)");
    await rejectsWith(extractText("b.odp", zipSync({ "x.txt": strToU8("x") })), "corrupt file (not a valid ODP file)");
  });
});

describe("EPUB", () => {
  it("reads chapters in spine order through the HTML path, with dc:title as title", async () => {
    const epub = makeEpub([{ file: "one.xhtml", body: "<h1>Chapter One</h1><p>Call me Ishmael.</p>" }, { file: "two words.xhtml", body: "<p>Second<br/>chapter</p>" }], { title: "Moby-Dick" });
    const { title, text } = await extractText("book.epub", epub);
    assert.equal(title, "Moby-Dick");
    assert.equal(text, "Chapter One\n\nCall me Ishmael.\n\nSecond\nchapter");
  });

  it("says a book without a package document is corrupt", async () => {
    await rejectsWith(extractText("b.epub", zipSync({ mimetype: strToU8("application/epub+zip") })), "corrupt file (not a valid EPUB book)");
  });
});

describe("RTF", () => {
  it("reads text, code-page bytes and Unicode escapes, skips font, colour and picture groups, takes \\info's title", async () => {
    const rtf =
      "{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0 Times New Roman;}}{\\colortbl;\\red0\\green0\\blue0;}" +
      "{\\info{\\title Travel \\'e9t\\'e9 notes}{\\author Ann}}" +
      "{\\*\\generator Writer;}\\pard Caf\\'e9 in Z\\u252?rich\\par Tokyo \\uc1\\u26481?\\u20140?\\tab tabbed\\line next\\par" +
      "{\\pict\\pngblip 89504e470d0a}Literal \\{braces\\} and \\\\ backslash\\par}";
    const { title, text } = await extractText("t.rtf", utf8(rtf));
    assert.equal(title, "Travel été notes");
    assert.equal(text, "Café in Zürich\nTokyo 東京\ttabbed\nnext\nLiteral {braces} and \\ backslash\n");
  });

  it("says a file that is not RTF is corrupt", async () => {
    await rejectsWith(extractText("x.rtf", garbage), "corrupt file (not a valid RTF document)");
  });
});

describe("e-mail", () => {
  it("reads an .eml's headers and text body, the subject as title, attachments left out", async () => {
    const eml = makeEml({ subject: "Budget: the okapi line", from: "Ann <ann@example.com>", to: "Bob <bob@example.com>", text: "Please check the okapi figures.", attachment: "attached secret zebra" });
    const { title, text } = await extractText("m.eml", eml);
    assert.equal(title, "Budget: the okapi line");
    assert.match(text, /From: Ann <ann@example\.com>/);
    assert.match(text, /Please check the okapi figures\./);
    assert.doesNotMatch(text, /zebra/);
  });

  it("reads an HTML-only message through the HTML path", async () => {
    const { text } = await extractText("h.eml", makeEml({ subject: "s", from: "a@example.com", to: "b@example.com", html: "<p>first</p><p>second<br>line</p>" }));
    assert.match(text, /first\n\nsecond\nline/);
  });

  it("reads an Outlook .msg's subject, sender and body", async () => {
    const { title, text } = await extractText("m.msg", makeMsg({ subject: "Quarterly numbers", senderName: "Ann Example", body: "The budget mentions the tapir." }));
    assert.equal(title, "Quarterly numbers");
    assert.match(text, /From: Ann Example/);
    assert.match(text, /The budget mentions the tapir\./);
  });

  it("says a file that is not a message is corrupt", async () => {
    await rejectsWith(extractText("x.msg", garbage), "corrupt file (not a valid Outlook message)");
    await rejectsWith(extractText("x.eml", utf8("no headers here, only words")), "corrupt file (not a valid e-mail message)");
  });
});

describe("legacy Office files written by LibreOffice", () => {
  // Written once by LibreOffice and committed (test/fixtures/office-files/README.md): no office suite runs here.
  const converted = { doc: readOfficeFile("r.doc"), rtf: readOfficeFile("r.rtf"), xls: readOfficeFile("s.xls"), ppt: readOfficeFile("d.ppt") };

  it("reads a Word 97-2003 .doc and its title", async () => {
    const { title, text } = await extractText("r.doc", converted.doc);
    assert.equal(title, "Harbour Report");
    assert.match(text, /Harbour report\nThe quokka census, Zürich\.\ntab\tseparated/);
  });

  it("reads LibreOffice's RTF", async () => {
    const { title, text } = await extractText("r.rtf", converted.rtf);
    assert.equal(title, "Harbour Report");
    assert.match(text, /The quokka census, Zürich\.\ntab\tseparated/);
  });

  it("reads an Excel 97-2003 .xls: shared strings and numbers, sheet by sheet, and its title", async () => {
    const { title, text } = await extractText("s.xls", converted.xls);
    assert.equal(title, "Stock");
    assert.equal(text, "Inventory\n\nitem\tcount\nwombat plush\t12\nprice\t3.75\n\nOther\n\nanswer\t42");
  });

  it("reads a PowerPoint 97-2003 .ppt without the masters' placeholder text, and its title", async () => {
    const { title, text } = await extractText("d.ppt", converted.ppt);
    assert.equal(title, "Deck");
    assert.equal(text, "Agenda\nBudget\n\nSecond slide mentions the narwhal");
  });
});

describe("legacy Office extensions, any machine", () => {
  it("reads an Office 2007+ file saved under the old extension for what it is", async () => {
    assert.match((await extractText("renamed.doc", await makeDocx(["modern content"]))).text, /modern content/);
  });

  it("says a legacy file that is neither a compound file nor text is corrupt", async () => {
    const binary = Uint8Array.from([0x50, 0x4b, 0x00, 0x00, ...utf8("not a compound file"), 0x00, 0x01]);
    await rejectsWith(extractText("x.doc", binary), "corrupt file (not a valid Word document)");
    await rejectsWith(extractText("x.xls", binary), "corrupt file (not a valid Excel workbook)");
    await rejectsWith(extractText("x.ppt", binary), "corrupt file (not a valid PowerPoint presentation)");
  });

  it("reads text, RTF and HTML saved under a legacy extension for what they are", async () => {
    // TeX's documented sources are .doc files of plain text (the real corpus's semlayer.doc).
    const tex = "%BEGIN semlayer.doc\n\\def\\fileversion{1.0}\n% LaTeX style option for slides, caf\u00e9 edition\n";
    assert.equal((await extractText("semlayer.doc", utf8(tex))).text, tex);
    assert.equal((await extractText("notes.doc", Uint8Array.from([0x4e, 0x61, 0xef, 0x76, 0x65]))).text, "Na\u00efve", "latin1 text");
    const rtf = await extractText("letter.doc", utf8("{\\rtf1\\ansi{\\fonttbl\\f0 Times;}\\f0 Dear narwhal keeper\\par}"));
    assert.match(rtf.text, /Dear narwhal keeper/);
    assert.doesNotMatch(rtf.text, /rtf1|fonttbl/);
    const sheet = await extractText("export.xls", utf8("<html><head><title>Q3</title></head><body><table><tr><td>walrus</td><td>42</td></tr></table></body></html>"));
    assert.match(sheet.text, /walrus/);
    assert.doesNotMatch(sheet.text, /<td>/);
    assert.equal((await extractText("deck.ppt", utf8("slide one: the harbour"))).text, "slide one: the harbour");
  });
});
