import { GifReader } from "omggif";
import * as UTIF from "utif";
import { corruptFile } from "../failures";
import { grayFromRgba, toPgm, type GrayImage } from "../ocr/gray-image";
import { cleanOcrText, timedOcr, type OcrContext } from "../ocr/ocr-context";
import { ocrEngine, pagePipeline, recognize } from "../ocr/ocr-engine";
import type { TextSegment } from "../parse-types";

/** The picture formats read by OCR alone (file-types.ts). */
export type ImageFormat = "png" | "jpeg" | "tiff" | "bmp" | "webp" | "gif";

/**
 * The words in a picture, read by OCR: PNG, JPEG, BMP and WebP go to Tesseract as they are
 * (Leptonica reads them), and so does a TIFF of one frame for the tesseract command; every frame
 * of a TIFF of several (a fax, a multi-page scan), and any TIFF for tesseract.js (its Leptonica
 * reads none), is decoded here, one at a time while earlier ones are read, and read as a page of
 * its own; a GIF gives its first frame.
 */
export async function imageText(format: ImageFormat, bytes: Uint8Array, ocr: OcrContext): Promise<TextSegment[]> {
  if (format === "tiff") return tiffPages(bytes, ocr);
  const picture = format === "gif" ? gifFirstFrame(bytes) : bytes;
  ocr.page(1, 1);
  const text = await timedOcr(ocr, () => recognize(picture, { label: "the image" }));
  return [{ text: cleanOcrText(text), page: null, location: null, scanned: true }];
}

async function tiffPages(bytes: Uint8Array, ocr: OcrContext): Promise<TextSegment[]> {
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  let ifds: UTIF.IFD[];
  try {
    ifds = UTIF.decode(buffer);
  } catch {
    throw corruptFile("TIFF image");
  }
  // Reduced-resolution copies (thumbnails, NewSubfileType bit 0) are not pages.
  const frames = ifds.filter((ifd) => ((ifd.t254 as number[] | undefined)?.[0] ?? 0) % 2 === 0);
  if (frames.length === 0) throw corruptFile("TIFF image");
  if (ifds.length === 1 && hasAllItsData(frames[0], bytes.length) && (await ocrEngine()) === "tesseract") {
    // The command reads the file as it would from the disk (a G4 fax stays 1 bit deep and
    // compressed, its resolution its own): decoded here it was 50 MB of pixels and half a second per page.
    ocr.page(1, 1);
    const text = await timedOcr(ocr, () => recognize(bytes, { label: "page 1" }));
    return [{ text: cleanOcrText(text), page: 1, location: "page 1", scanned: true }];
  }
  // Frames are read while the next ones are decoded (page-pipeline.ts).
  const pipeline = await pagePipeline(ocr);
  try {
    for (const [i, frame] of frames.entries()) {
      const label = `page ${i + 1}`;
      ocr.page(i + 1, frames.length);
      const idle = pipeline.idle;
      const start = performance.now();
      let picture: Uint8Array | null;
      try {
        UTIF.decodeImage(buffer, frame);
        picture = toPgm(grayOfFrame(frame));
      } catch {
        picture = null;
      } finally {
        frame.data = new Uint8Array(0); // the decoded frame goes now, not with the whole file
      }
      // While a recognition runs, decoding the next frame is within OCR's time already.
      if (idle) ocr.seconds += (performance.now() - start) / 1000;
      if (!picture) throw corruptFile(`TIFF image (${label} cannot be decoded)`);
      const image = picture;
      await pipeline.add({ page: i + 1, recognize: (signal) => recognize(image, { label }, frameDpi(frame), signal) });
    }
    const texts = await pipeline.finish();
    return frames.map((_, i) => ({ text: cleanOcrText(texts.get(i + 1) ?? ""), page: i + 1, location: `page ${i + 1}`, scanned: true }));
  } finally {
    pipeline.stop(); // a file that failed leaves no recognition running
  }
}

/** Whether every strip (or tile) of the frame lies inside the file: a cut-off file is decoded here, and fails as a damaged TIFF. */
function hasAllItsData(frame: UTIF.IFD, fileLength: number): boolean {
  const offsets = (frame.t273 ?? frame.t324) as number[] | undefined;
  const counts = (frame.t279 ?? frame.t325) as number[] | undefined;
  return !!offsets && !!counts && offsets.length > 0 && offsets.length === counts.length && offsets.every((at, i) => at + counts[i] <= fileLength);
}

/**
 * A decoded TIFF frame in 8-bit gray. Black-and-white and gray frames (WhiteIsZero or
 * BlackIsZero, 1 or 8 bits, one sample: faxes and document scans) straight from their rows;
 * any other through utif's RGBA, four bytes a pixel (34 MB for a Letter page at 300 dpi).
 */
function grayOfFrame(frame: UTIF.IFD): GrayImage {
  const { width, height } = frame;
  const photometric = (frame.t262 as number[] | undefined)?.[0] ?? 2;
  const bits = (frame.t258 as number[] | undefined) ?? [1];
  if ((photometric !== 0 && photometric !== 1) || bits.length !== 1 || (bits[0] !== 1 && bits[0] !== 8)) return grayFromRgba(UTIF.toRGBA8(frame), width, height);
  const data = frame.data as Uint8Array;
  const rowBytes = Math.ceil((bits[0] * width) / 8);
  const pixels = new Uint8Array(width * height);
  const invert = photometric === 0 ? 255 : 0; // WhiteIsZero: 0 is paper
  for (let y = 0; y < height; y++) {
    const row = y * rowBytes;
    const out = y * width;
    if (bits[0] === 8) for (let x = 0; x < width; x++) pixels[out + x] = data[row + x] ^ invert;
    else for (let x = 0; x < width; x++) pixels[out + x] = (((data[row + (x >> 3)] >> (7 - (x & 7))) & 1) * 255) ^ invert;
  }
  return { width, height, pixels };
}

/**
 * The resolution a TIFF frame says it was scanned at (XResolution, in its ResolutionUnit), or
 * null when it says none: the PGM handed over has no place for it, and without it Tesseract
 * guesses from the type's size (and reads a 300 dpi fax a little differently than from the file).
 */
function frameDpi(frame: UTIF.IFD): number | null {
  const x = (frame.t282 as number[] | undefined)?.[0];
  if (!x || !Number.isFinite(x) || x <= 1) return null;
  const perCm = (frame.t296 as number[] | undefined)?.[0] === 3;
  return Math.round(perCm ? x * 2.54 : x);
}

function gifFirstFrame(bytes: Uint8Array): Uint8Array {
  try {
    const gif = new GifReader(bytes);
    const rgba = new Uint8Array(gif.width * gif.height * 4);
    gif.decodeAndBlitFrameRGBA(0, rgba);
    return toPgm(grayFromRgba(rgba, gif.width, gif.height));
  } catch {
    throw corruptFile("GIF image");
  }
}
