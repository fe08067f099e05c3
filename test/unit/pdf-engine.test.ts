// Item: the PDF engine (PDFium in WebAssembly) keeps its memory bounded (issue 14, items 2-3).
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { pdfText } from "../../server/ingest/parse/formats/pdf";
import { pdfiumLimits, pdfiumMemoryBytes } from "../../server/ingest/parse/formats/pdfium";
import { ParseError } from "../../server/ingest/parse/parse-types";
import { makePdf } from "../fixtures/documents";

const MB = 2 ** 20;
const defaults = { ...pdfiumLimits };

describe("PDFium memory", () => {
  afterEach(() => Object.assign(pdfiumLimits, defaults));

  it("keeps its instance between small PDFs, and drops one that a PDF grew by more than the recycle growth", async () => {
    const small = await makePdf(["A small note about otters."]);
    assert.match((await pdfText(small)).text, /small note about otters/);
    const kept = await pdfiumMemoryBytes();
    assert.ok(kept > 0, "an instance was made");
    assert.match((await pdfText(small)).text, /small note about otters/);
    assert.equal(await pdfiumMemoryBytes(), kept, "a small PDF leaves the same instance, not grown");

    // PDFium holds the whole file: 24 MB grows the instance by more than the default growth (4 MB)
    // but leaves it well under 64 MB, the absolute threshold it used to be kept up to.
    const big = await makePdf(["A big file about herons."], { imageBytes: 24 * MB });
    assert.match((await pdfText(big)).text, /big file about herons/);
    assert.equal(await pdfiumMemoryBytes(), 0, "the grown instance is gone once the file is done");

    assert.match((await pdfText(small)).text, /small note about otters/);
    assert.equal(await pdfiumMemoryBytes(), kept, "the next file gets a fresh instance of the first size");

    pdfiumLimits.recycleGrowthMb = 64;
    await pdfText(big);
    const grown = await pdfiumMemoryBytes();
    assert.ok(grown > kept + 4 * MB && grown < kept + 64 * MB, `grown to ${grown / MB} MB, under the growth allowed: kept`);
  });

  it("fails a PDF that needs more than the limit alone, with a clear message, and reads the next one", async () => {
    const small = await makePdf(["Ordinary text about kingfishers."]);
    pdfiumLimits.recycleGrowthMb = -1; // every file gets a fresh instance, so the next one has the lower limit
    await pdfText(small);
    pdfiumLimits.maxMb = 20; // PDFium starts at about 18 MB
    const big = await makePdf(["Too big"], { imageBytes: 24 * MB });
    await assert.rejects(pdfText(big), (err: unknown) => err instanceof ParseError && err.message === "PDF parsing ran out of memory (limit 20 MB)");
    assert.match((await pdfText(small)).text, /Ordinary text about kingfishers/);
  });
});
