import { grayFromRgba, toPgm, type GrayImage } from "../ocr/gray-image";
import { outOfMemory, type Pdfium } from "./pdfium";

// FPDFPageObj_GetType (fpdf_edit.h) and FPDF_RenderPageBitmap's flags (fpdfview.h)
const FPDF_PAGEOBJ_IMAGE = 3;
const FPDF_PAGEOBJ_FORM = 5;
const FPDF_ANNOT = 0x01;

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
  return { image: toPgm(renderGray(pdfium, page, dpi)), dpi };
}

/** The page drawn in gray at `dpi`. */
export function renderGray(pdfium: Pdfium, page: number, dpi: number): GrayImage {
  const { api } = pdfium;
  const widthPt = api.FPDF_GetPageWidthF(page);
  const heightPt = api.FPDF_GetPageHeightF(page);
  const width = Math.max(1, Math.round((widthPt * dpi) / 72));
  const height = Math.max(1, Math.round((heightPt * dpi) / 72));
  const bitmap = api.FPDFBitmap_Create(width, height, 0);
  if (!bitmap) throw outOfMemory(pdfium);
  try {
    api.FPDFBitmap_FillRect(bitmap, 0, 0, width, height, 0xffffffff);
    api.FPDF_RenderPageBitmap(bitmap, page, 0, 0, width, height, 0, FPDF_ANNOT);
    const buffer = api.FPDFBitmap_GetBuffer(bitmap);
    const stride = api.FPDFBitmap_GetStride(bitmap);
    const bgrx = pdfium.heapU8().subarray(buffer, buffer + stride * height);
    return grayFromRgba(bgrx, width, height, { stride, bgr: true, opaque: true });
  } finally {
    api.FPDFBitmap_Destroy(bitmap);
  }
}
