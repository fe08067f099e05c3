/** An 8-bit grayscale picture of one page, row after row: what OCR reads. */
export interface GrayImage {
  width: number;
  height: number;
  pixels: Uint8Array;
}

/** Rec. 601 luma of 8-bit RGBA pixels; transparent pixels are paper (a PNG's background), not ink. */
export function grayFromRgba(rgba: Uint8Array, width: number, height: number): GrayImage {
  const pixels = new Uint8Array(width * height);
  for (let i = 0; i < pixels.length; i++) {
    const at = i * 4;
    const alpha = rgba[at + 3] / 255;
    const luma = 0.299 * rgba[at] + 0.587 * rgba[at + 1] + 0.114 * rgba[at + 2];
    pixels[i] = Math.round(luma * alpha + 255 * (1 - alpha));
  }
  return { width, height, pixels };
}

/**
 * The picture as a binary PGM (P5), the simplest file both Tesseracts (Leptonica) read: no
 * encoder, no library. `dpi` is not in the format; the engines are told it apart.
 */
export function toPgm(image: GrayImage): Uint8Array {
  const header = pgmHeader(image.width, image.height);
  const file = new Uint8Array(header.length + image.pixels.length);
  file.set(header, 0);
  file.set(image.pixels, header.length);
  return file;
}

/** A binary PGM's header: what comes before its width x height bytes of gray. */
export function pgmHeader(width: number, height: number): Uint8Array {
  return new TextEncoder().encode(`P5\n${width} ${height}\n255\n`);
}
