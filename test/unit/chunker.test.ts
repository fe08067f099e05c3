import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { chunkSegments, chunkText, normaliseWhitespace, TextChunker, type ChunkOptions } from "../../server/ingest/parse/chunker";
import { fillerParagraph } from "../fixtures/documents";

const longText = Array.from({ length: 60 }, (_, i) => `Section ${i}.\n\n${fillerParagraph(i, 40 + (i % 7) * 15)}`).join("\n\n\n");
const words = (text: string): string[] => text.split(/\s+/).filter(Boolean);

describe("chunkText", () => {
  it("returns no chunks for empty or blank text", () => {
    assert.deepEqual(chunkText(""), []);
    assert.deepEqual(chunkText(" \n\t\r\n  "), []);
  });

  it("keeps short text as one normalised chunk", () => {
    assert.deepEqual(chunkText("  Hello\t\tthere   world \r\n\r\n\r\n\r\nNext  para  "), [{ chunkIndex: 0, text: "Hello there world\n\nNext para" }]);
  });

  it("makes chunks of at most `size` characters, numbered in order, most of them near the size", () => {
    const chunks = chunkText(longText);
    assert.ok(chunks.length > 10);
    chunks.forEach((chunk, i) => {
      assert.equal(chunk.chunkIndex, i);
      assert.ok(chunk.text.length <= 1000, `chunk ${i} is ${chunk.text.length} long`);
      if (i < chunks.length - 1) assert.ok(chunk.text.length >= 500, `chunk ${i} is only ${chunk.text.length} long`);
      assert.equal(chunk.text, chunk.text.trim());
    });
  });

  it("overlaps consecutive chunks by up to about `overlap` characters", () => {
    const chunks = chunkText(longText, { size: 400, overlap: 80 });
    for (let i = 1; i < chunks.length; i++) {
      const previous = chunks[i - 1].text;
      const shared = longestSuffixPrefix(previous, chunks[i].text);
      assert.ok(shared >= 20 && shared <= 80, `overlap between ${i - 1} and ${i} is ${shared}`);
    }
    const noOverlap = chunkText(longText, { size: 400, overlap: 0 });
    assert.deepEqual(words(noOverlap.map((c) => c.text).join(" ")), words(longText));
  });

  it("loses no word and breaks only at word edges: chunks tile the text with no gaps", () => {
    const source = normaliseWhitespace(longText);
    for (const opts of [{}, { size: 300, overlap: 50 }, { size: 57, overlap: 10 }]) {
      let previousStart = -1;
      let covered = 0;
      for (const chunk of chunkText(longText, opts)) {
        const start = source.indexOf(chunk.text, previousStart + 1);
        assert.ok(start >= 0, "each chunk is a verbatim slice of the normalised text, after the previous one");
        assert.match(source.slice(covered, Math.max(covered, start)), /^\s*$/, "nothing but whitespace skipped between chunks");
        const end = start + chunk.text.length;
        assert.ok(start === 0 || /\s/.test(source[start - 1]), `chunk starts at a word edge: ${chunk.text.slice(0, 20)}`);
        assert.ok(end === source.length || /\s/.test(source[end]), `chunk ends at a word edge: ${chunk.text.slice(-20)}`);
        previousStart = start;
        covered = Math.max(covered, end);
      }
      assert.equal(covered, source.length, `all text covered with ${JSON.stringify(opts)}`);
      const vocabulary = new Set(chunkText(longText, opts).flatMap((c) => words(c.text)));
      for (const word of words(longText)) assert.ok(vocabulary.has(word), `${word} is whole in some chunk`);
    }
  });

  it("prefers to end chunks at sentence or paragraph ends", () => {
    const chunks = chunkText(longText, { size: 300, overlap: 50 });
    const endings = chunks.slice(0, -1).filter((c) => /[.!?]$/.test(c.text)).length;
    assert.ok(endings >= (chunks.length - 1) * 0.8, `${endings} of ${chunks.length - 1} chunks end a sentence`);
  });

  it("cuts a word longer than the chunk only because it must, and never splits a surrogate pair", () => {
    const giant = "😀".repeat(700); // 1400 UTF-16 units, no spaces
    const chunks = chunkText(`start ${giant} end`);
    assert.ok(chunks.every((c) => c.text.length <= 1000));
    assert.ok(chunks.every((c) => !/[\ud800-\udbff]$/.test(c.text) && !/^[\udc00-\udfff]/.test(c.text)));
    assert.equal(chunks.map((c) => c.text).join("").replace(/\s/g, ""), `start${giant}end`); // no overlap inside a cut word
    assert.match(chunks[0].text, /^start/);
    assert.match(chunks.at(-1)!.text, /end$/);
  });

  it("is deterministic", () => {
    assert.deepEqual(chunkText(longText, { size: 333, overlap: 44 }), chunkText(longText, { size: 333, overlap: 44 }));
  });

  it("normalises whitespace runs but keeps paragraph breaks", () => {
    assert.equal(normaliseWhitespace("a \t b\r\nc\n \n\n\n d\u00a0\u00a0e "), "a b\nc\n\nd e");
  });

  it("normalises whitespace exactly as the plain rules say, for any mix of blanks, breaks and letters", () => {
    // The rules written plainly (every blank run to one space, spaces beside a break dropped,
    // three or more breaks to two); the chunker's patterns skip what would not change.
    const plain = (text: string) =>
      text.replace(/\r\n?/g, "\n").replace(/[^\S\n]+/g, " ").replace(/ ?\n ?/g, "\n").replace(/\n{3,}/g, "\n\n").trim();
    const alphabet = [" ", " ", "\n", "\n", "\r", "\t", "\u00a0", "\u2003", "\f", "\v", "a", "b", "."];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let i = 0; i < 20_000; i++) {
      const text = Array.from({ length: Math.floor(next() * 16) }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
      assert.equal(normaliseWhitespace(text), plain(text), JSON.stringify(text));
    }
  });
});

/** The chunks of `text` pushed to a TextChunker in pieces cut at `cuts`. */
function chunkPieces(text: string, cuts: number[], opts: ChunkOptions = {}) {
  const chunker = new TextChunker(opts);
  const chunks = [];
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    chunks.push(...chunker.push(text.slice(from, cut)));
    from = cut;
  }
  return [...chunks, ...chunker.end()];
}

function everyN(length: number, n: number): number[] {
  return Array.from({ length: Math.floor(length / n) }, (_, i) => (i + 1) * n);
}

describe("TextChunker (text that arrives in pieces)", () => {
  const tricky =
    "\r\n \t Lead in.\r\rCRLF line\r\nnext\u00a0\u00a0word \n \n \n\nPara two. Sentence end! " +
    `${"😀".repeat(600)} tail ` +
    Array.from({ length: 30 }, (_, i) => `Sentence ${i} ends here.`).join(" ") +
    `\r\n${" ".repeat(80)}\r${"\t".repeat(70)}\r\n\r\nLast paragraph after a long blank run.\n\n \t\r\n`;

  it("gives the chunks of the whole text wherever the pieces are cut", () => {
    for (const opts of [{}, { size: 300, overlap: 50 }, { size: 57, overlap: 10 }, { size: 100, overlap: 0 }]) {
      const whole = chunkText(longText, opts);
      for (const n of [1, 7, 100, 999, 1000, 1001, 4096]) {
        assert.deepEqual(chunkPieces(longText, everyN(longText.length, n), opts), whole, `pieces of ${n} with ${JSON.stringify(opts)}`);
      }
    }
  });

  it("holds whitespace runs, CR LF pairs, surrogate pairs and sentence ends cut between pieces", () => {
    for (const opts of [{ size: 120, overlap: 30 }, {}]) {
      const whole = chunkText(tricky, opts);
      assert.ok(whole.length > 1);
      for (let cut = 0; cut <= tricky.length; cut++) {
        assert.deepEqual(chunkPieces(tricky, [cut], opts), whole, `cut at ${cut} with ${JSON.stringify(opts)}`);
      }
      assert.deepEqual(chunkPieces(tricky, everyN(tricky.length, 1), opts), whole, "one character at a time");
    }
  });

  it("yields nothing for pieces of whitespace only, however many", () => {
    const chunker = new TextChunker();
    for (let i = 0; i < 1000; i++) assert.deepEqual(chunker.push(" \r\n\t\r"), []);
    assert.deepEqual(chunker.end(), []);
    assert.ok(chunker.held < 100, "a run of blanks is not kept whole");
  });

  it("holds about one chunk of text, not the text seen so far", () => {
    const chunker = new TextChunker();
    let chunks = 0;
    let most = 0;
    for (let i = 0; i < 200; i++) {
      chunks += chunker.push(`${longText.slice(0, 50_000)}\n\n`).length;
      most = Math.max(most, chunker.held);
    }
    chunks += chunker.end().length;
    assert.ok(most < 52_000, `held ${most} characters`);
    assert.ok(chunks > 10_000, `${chunks} chunks`);
  });
});

function longestSuffixPrefix(a: string, b: string): number {
  for (let n = Math.min(a.length, b.length); n > 0; n--) if (a.endsWith(b.slice(0, n))) return n;
  return 0;
}

describe("chunkSegments (paged documents)", () => {
  const page = (n: number, text: string, scanned = false) => ({ text, page: n, location: `page ${n}`, scanned });
  const pages = [page(1, fillerParagraph(1, 120)), page(2, "  \n "), page(3, fillerParagraph(3, 200)), page(4, fillerParagraph(4, 150))];

  it("cuts the pages as one text: the same chunks as chunkText of the pages joined by paragraph breaks", () => {
    const joined = pages.map((p) => p.text).join("\n\n");
    assert.deepEqual(chunkSegments(pages, { size: 300, overlap: 50 }).map(({ chunkIndex, text }) => ({ chunkIndex, text })), chunkText(joined, { size: 300, overlap: 50 }));
  });

  it("gives each chunk the page its text starts on: a passage over two pages gives the first", () => {
    const chunks = chunkSegments(pages, { size: 300, overlap: 50 });
    const normalised = pages.map((p) => normaliseWhitespace(p.text));
    for (const chunk of chunks) {
      const on = normalised.findIndex((text) => text.includes(chunk.text.slice(0, 40)));
      assert.equal(chunk.page, on + 1, `${chunk.text.slice(0, 40)} starts on page ${on + 1}`);
      assert.equal(chunk.location, `page ${on + 1}`);
    }
    const spanning = chunks.find((chunk) => chunk.page === 1 && chunk.text.includes(normaliseWhitespace(pages[2].text).slice(0, 30)));
    assert.ok(spanning, "a chunk runs from page 1 into page 3 (page 2 is blank) and says page 1");
    assert.ok(!chunks.some((chunk) => chunk.page === 2), "a blank page has no chunk");
    assert.deepEqual([...new Set(chunks.map((chunk) => chunk.page))], [1, 3, 4]);
  });

  it("cuts each scanned page on its own: a chunk never runs from a scan into the next page, nor from a text page into a scan", () => {
    const scan = [page(1, fillerParagraph(1, 120)), page(2, fillerParagraph(2, 90), true), page(3, fillerParagraph(3, 130), true), page(4, fillerParagraph(4, 110))];
    const chunks = chunkSegments(scan, { size: 300, overlap: 50 });
    const normalised = scan.map((p) => normaliseWhitespace(p.text));
    for (const chunk of chunks) assert.ok(normalised[chunk.page! - 1].includes(chunk.text), `chunk ${chunk.chunkIndex} lies inside page ${chunk.page}`);
    assert.deepEqual([...new Set(chunks.map((chunk) => chunk.page))], [1, 2, 3, 4]);
    assert.deepEqual([...new Set(chunks.map((chunk) => `${chunk.page}:${chunk.scanned}`))], ["1:false", "2:true", "3:true", "4:false"]);
    assert.deepEqual(chunks.map((chunk) => chunk.chunkIndex), chunks.map((_, i) => i));
  });

  it("cuts each slide and each sheet on its own: a chunk never mixes two", () => {
    const slides = [
      { text: "Agenda", page: 1, location: "slide 1", scanned: false },
      { text: "The quokka census", page: 2, location: "slide 2", scanned: false },
    ];
    const sheets = [
      { text: "Inventory\n\nrope\t3", page: null, location: "sheet Inventory", scanned: false },
      { text: "Budget\n\nquokka feed\t120", page: null, location: "sheet Budget", scanned: false },
    ];
    assert.deepEqual(chunkSegments(slides), [
      { chunkIndex: 0, text: "Agenda", page: 1, location: "slide 1", scanned: false },
      { chunkIndex: 1, text: "The quokka census", page: 2, location: "slide 2", scanned: false },
    ]);
    assert.deepEqual(chunkSegments(sheets).map((chunk) => [chunk.chunkIndex, chunk.location]), [[0, "sheet Inventory"], [1, "sheet Budget"]]);
  });
});
