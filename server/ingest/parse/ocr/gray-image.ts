/** An 8-bit grayscale picture of one page, row after row: what OCR reads. */
export interface GrayImage {
  width: number;
  height: number;
  pixels: Uint8Array;
}

/** Rec. 601 luma of 8-bit RGBA pixels (BGRA with `bgr`; `opaque`: the fourth byte is not alpha). */
export function grayFromRgba(rgba: Uint8Array, width: number, height: number, opts: { stride?: number; bgr?: boolean; opaque?: boolean } = {}): GrayImage {
  const { stride = width * 4, bgr = false, opaque = false } = opts;
  const pixels = new Uint8Array(width * height);
  const [r, b] = bgr ? [2, 0] : [0, 2];
  for (let y = 0; y < height; y++) {
    const row = y * stride;
    for (let x = 0; x < width; x++) {
      const at = row + x * 4;
      // Transparent pixels are paper (a PNG's background), not ink.
      const alpha = opaque ? 1 : rgba[at + 3] / 255;
      const luma = 0.299 * rgba[at + r] + 0.587 * rgba[at + 1] + 0.114 * rgba[at + b];
      pixels[y * width + x] = Math.round(luma * alpha + 255 * (1 - alpha));
    }
  }
  return { width, height, pixels };
}

/**
 * The picture as a binary PGM (P5), the simplest file both Tesseracts (Leptonica) read: no
 * encoder, no library. `dpi` is not in the format; the engines are told it apart.
 */
export function toPgm(image: GrayImage): Uint8Array {
  const header = new TextEncoder().encode(`P5\n${image.width} ${image.height}\n255\n`);
  const file = new Uint8Array(header.length + image.pixels.length);
  file.set(header, 0);
  file.set(image.pixels, header.length);
  return file;
}
