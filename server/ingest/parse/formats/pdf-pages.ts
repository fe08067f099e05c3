import { pgmHeader, type GrayImage } from "../ocr/gray-image";
import { outOfMemory, type Pdfium } from "./pdfium";

// FPDFPageObj_GetType (fpdf_edit.h), FPDF_RenderPageBitmap's flags and FPDFBitmap_CreateEx's formats (fpdfview.h)
const FPDF_PAGEOBJ_IMAGE = 3;
const FPDF_PAGEOBJ_FORM = 5;
const FPDF_ANNOT = 0x01;
const FPDFBitmap_Gray = 1;

/** Below this many letters and digits, a page's text layer is at most a scanner's stamp ("Scanned with ..."), a page number or a fax header. */
const STAMP_WORD_CHARS = 80;
/** A page whose pictures cover at least this share of it is a picture of a page. */
const SCAN_COVERAGE = 0.4;
/** Pages are rendered for OCR at this resolution (what Tesseract is trained on), ... */
export const OCR_DPI = 300;
/** ... their longest side at most this many pixels (an A4 page at 300 dpi is 3508). */
const MAX_OCR_SIDE = 5000;

/** Pictures scanned below this resolution are still drawn at it: Tesseract reads small type badly under ~150 dpi. */
const MIN_OCR_DPI = 150;

/**
 * Whether a page's text layer is missing or only a stamp while pictures cover most of it (its
 * words are in the picture): null for a page of text, else the resolution to draw it at for OCR,
 * its pictures' own (within 150 to 300 dpi: drawing a 200 dpi fax at 300 only makes OCR slower).
 */
export function ocrResolution(pdfium: Pdfium, page: number, text: string): number | null {
  const wordChars = text.match(/[\p{L}\p{N}]/gu)?.length ?? 0;
  if (wordChars >= STAMP_WORD_CHARS) return null;
  const { api } = pdfium;
  const area = api.FPDF_GetPageWidthF(page) * api.FPDF_GetPageHeightF(page);
  const pictures = imagesOf(pdfium, page);
  if (area <= 0 || pictures.area < area * SCAN_COVERAGE) return null;
  return Math.round(Math.min(OCR_DPI, Math.max(MIN_OCR_DPI, pictures.dpi || OCR_DPI)));
}

/** The area the page's pictures cover (their bounding boxes, summed; inside form XObjects too) and the highest resolution one is drawn at. */
function imagesOf(pdfium: Pdfium, page: number): { area: number; dpi: number } {
  const { api, raw } = pdfium;
  const box = raw.malloc(16);
  const size = raw.malloc(8);
  const f32 = () => pdfium.heapF32().subarray(box >> 2, (box >> 2) + 4);
  let total = 0;
  let dpi = 0;
  const walk = (count: number, objectAt: (i: number) => number, depth: number) => {
    for (let i = 0; i < count; i++) {
      const object = objectAt(i);
      const type = api.FPDFPageObj_GetType(object);
      if (type === FPDF_PAGEOBJ_FORM && depth < 8) walk(api.FPDFFormObj_CountObjects(object), (j) => api.FPDFFormObj_GetObject(object, j), depth + 1);
      if (type !== FPDF_PAGEOBJ_IMAGE) continue;
      // FPDFPageObj_GetBounds writes left, bottom, right, top as floats.
      if (api.FPDFPageObj_GetBounds(object, box, box + 4, box + 8, box + 12)) {
        const [left, bottom, right, top] = f32();
        total += Math.max(0, right - left) * Math.max(0, top - bottom);
        // Pixels across the picture over its width in inches (a turned picture: its longer sides).
        if (api.FPDFImageObj_GetImagePixelSize(object, size, size + 4) && right > left && top > bottom) {
          const heap = new Uint32Array(pdfium.heapU8().buffer, size, 2);
          dpi = Math.max(dpi, (Math.max(heap[0], heap[1]) * 72) / Math.max(right - left, top - bottom));
        }
      }
    }
  };
  try {
    walk(api.FPDFPage_CountObjects(page), (i) => api.FPDFPage_GetObject(page, i), 0);
  } finally {
    raw.free(box);
    raw.free(size);
  }
  return { area: total, dpi };
}

/** The page drawn in gray at `wanted` dpi (less for a huge page), as a PGM file, and the resolution it was drawn at. */
export function renderForOcr(pdfium: Pdfium, page: number, wanted: number): { image: Uint8Array; dpi: number } {
  const { api } = pdfium;
  const dpi = Math.min(wanted, Math.floor((MAX_OCR_SIDE * 72) / Math.max(api.FPDF_GetPageWidthF(page), api.FPDF_GetPageHeightF(page), 1)));
  // Straight from PDFium's bitmap into the file: one copy of the page's pixels outside it, not three.
  const image = drawGray(pdfium, page, dpi, (rows, stride, width, height) => {
    const header = pgmHeader(width, height);
    const file = new Uint8Array(header.length + width * height);
    file.set(header, 0);
    copyRows(rows, stride, width, height, file.subarray(header.length));
    return file;
  });
  return { image, dpi };
}

/** The page drawn in gray at `dpi`. */
export function renderGray(pdfium: Pdfium, page: number, dpi: number): GrayImage {
  return drawGray(pdfium, page, dpi, (rows, stride, width, height) => {
    const pixels = new Uint8Array(width * height);
    copyRows(rows, stride, width, height, pixels);
    return { width, height, pixels };
  });
}

/**
 * Draws the page at `dpi` into an 8-bit gray bitmap of PDFium's own (FPDFBitmap_Gray: a quarter
 * of the memory of a BGRx one, 8 MB for a Letter page at 300 dpi instead of 34, and no
 * conversion to gray after; a scan's pixels come out the same), and hands its rows to `take`
 * before the bitmap is freed.
 */
function drawGray<T>(pdfium: Pdfium, page: number, dpi: number, take: (rows: Uint8Array, stride: number, width: number, height: number) => T): T {
  const { api } = pdfium;
  const width = Math.max(1, Math.round((api.FPDF_GetPageWidthF(page) * dpi) / 72));
  const height = Math.max(1, Math.round((api.FPDF_GetPageHeightF(page) * dpi) / 72));
  const bitmap = api.FPDFBitmap_CreateEx(width, height, FPDFBitmap_Gray, 0, 0);
  if (!bitmap) throw outOfMemory(pdfium);
  try {
    api.FPDFBitmap_FillRect(bitmap, 0, 0, width, height, 0xffffffff);
    api.FPDF_RenderPageBitmap(bitmap, page, 0, 0, width, height, 0, FPDF_ANNOT);
    const buffer = api.FPDFBitmap_GetBuffer(bitmap);
    const stride = api.FPDFBitmap_GetStride(bitmap);
    return take(pdfium.heapU8().subarray(buffer, buffer + stride * height), stride, width, height);
  } finally {
    api.FPDFBitmap_Destroy(bitmap);
  }
}

/** Rows of `width` bytes, `stride` apart (PDFium pads them to 4 bytes), packed into `out`. */
function copyRows(rows: Uint8Array, stride: number, width: number, height: number, out: Uint8Array): void {
  if (stride === width) out.set(rows.subarray(0, width * height));
  else for (let y = 0; y < height; y++) out.set(rows.subarray(y * stride, y * stride + width), y * width);
}
