import { GifReader } from "omggif";
import * as UTIF from "utif";
import { corruptFile } from "../failures";
import { grayFromRgba, toPgm } from "../ocr/gray-image";
import { cleanOcrText, timedOcr, type OcrContext } from "../ocr/ocr-context";
import { recognize } from "../ocr/ocr-engine";
import type { TextSegment } from "../parse-types";

/** The picture formats read by OCR alone (file-types.ts). */
export type ImageFormat = "png" | "jpeg" | "tiff" | "bmp" | "webp" | "gif";

/**
 * The words in a picture, read by OCR: PNG, JPEG, BMP and WebP go to Tesseract as they are
 * (Leptonica reads them); every frame of a TIFF (a fax, a multi-page scan) is decoded here, one
 * at a time, and read as a page of its own; a GIF gives its first frame.
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
  let frames: UTIF.IFD[];
  try {
    // Reduced-resolution copies (thumbnails, NewSubfileType bit 0) are not pages.
    frames = UTIF.decode(buffer).filter((ifd) => ((ifd.t254 as number[] | undefined)?.[0] ?? 0) % 2 === 0);
  } catch {
    throw corruptFile("TIFF image");
  }
  if (frames.length === 0) throw corruptFile("TIFF image");
  const pages: TextSegment[] = [];
  for (const [i, frame] of frames.entries()) {
    const label = `page ${i + 1}`;
    ocr.page(i + 1, frames.length);
    const picture = await timedOcr(ocr, async () => {
      try {
        UTIF.decodeImage(buffer, frame);
        const rgba = UTIF.toRGBA8(frame);
        return toPgm(grayFromRgba(rgba, frame.width, frame.height));
      } catch {
        return null;
      } finally {
        frame.data = new Uint8Array(0); // the decoded frame goes now, not with the whole file
      }
    });
    if (!picture) throw corruptFile(`TIFF image (${label} cannot be decoded)`);
    const text = await timedOcr(ocr, () => recognize(picture, { label }));
    pages.push({ text: cleanOcrText(text), page: i + 1, location: label, scanned: true });
  }
  return pages;
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
