// Real scanned pages nobody here wrote, for `npm run bench -- --ocr-real` (issue 35's target).
// None is committed: they are fetched at bench time from Debian's source packages (the only
// archive this machine reaches besides npm), kept in a cache folder, and laid out as a share of
// scans: the pictures as they are (TIFF, PNG, JPEG), and some of them bound into scanned PDFs
// and a multi-page TIFF, the way a scanner or a fax writes them (the picture's own bytes or
// pixels, no text layer).
//
// Where they come from, and their licences:
// - Debian source package `leptonlib` (Leptonica 1.82.0), `prog/`: pages scanned by Leptonica's
//   author for its tests and examples (book pages, papers, a patent, tables). BSD-2-Clause
//   (leptonica-license.txt; debian/copyright: "Copyright (C) 2001 Leptonica").
// - Debian source package `tesseract` 5.3.0, its `orig-test` tarball (the tesseract-ocr/test
//   repository), `testing/`: two pages of the UNLV-ISRI OCR test set (8087_054.3B, 8071_093.3B),
//   eurotext and phototest. Apache-2.0 (its LICENSE; debian/copyright "Files: *").
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { concatTransformationMatrix, drawObject, PDFDocument, popGraphicsState, pushGraphicsState } from "pdf-lib";
import * as UTIF from "utif";
import type { GrayImage } from "../../server/ingest/parse/ocr/gray-image";
import { addPictureFilePage, toTiff } from "../fixtures/scans";

/** A Debian source tarball and the folder inside it that holds the scans. */
interface Origin {
  sourcePackage: string;
  /** The tarball's name pattern in the cache folder (`apt-get source --download-only` puts it there). */
  tarball: RegExp;
  folder: string;
  licence: string;
}

const LEPTONICA: Origin = { sourcePackage: "leptonlib", tarball: /^leptonlib_.*\.orig\.tar\.(gz|xz|bz2)$/, folder: "prog", licence: "BSD-2-Clause (Leptonica)" };
const TESSERACT_TEST: Origin = { sourcePackage: "tesseract", tarball: /^tesseract_.*\.orig-test\.tar\.(gz|xz|bz2)$/, folder: "testing", licence: "Apache-2.0 (tesseract-ocr/test)" };

/**
 * The documents of the share: each is one file of one or more pages, each page one real scan.
 * `as`: the file as it is (`picture`), or the pages bound into a scanned PDF or a multi-page TIFF.
 * Picked for having words on them (tesseract reads 20 to 1,200 words of 4 letters or more on each)
 * and for their variety: 300 dpi G4 faxes, 150 dpi JPEG book pages, 1-bit PNGs, a table, a patent.
 */
export const REAL_SCAN_DOCUMENTS: Array<{ name: string; as: "picture" | "pdf" | "tiff"; origin: Origin; pages: string[] }> = [
  // First one of each kind, so a small run (--pages 8) meets them all.
  { name: "feyn.tif", as: "picture", origin: LEPTONICA, pages: ["feyn.tif"] },
  { name: "unlv-and-words.pdf", as: "pdf", origin: TESSERACT_TEST, pages: ["8071_093.3B.tif", "phototest.tif"] },
  { name: "lucasta.047.jpg", as: "picture", origin: LEPTONICA, pages: ["lucasta.047.jpg"] },
  { name: "fax.tif", as: "tiff", origin: LEPTONICA, pages: ["words.44.tif", "words.15.tif", "table.15.tif"] },
  { name: "patent.png", as: "picture", origin: LEPTONICA, pages: ["patent.png"] },
  { name: "book-pages.pdf", as: "pdf", origin: LEPTONICA, pages: ["1555.003.jpg", "1555.007.jpg", "cat.007.jpg", "cat.035.jpg"] },
  { name: "scots-frag.tif", as: "picture", origin: LEPTONICA, pages: ["scots-frag.tif"] },
  { name: "witten.tif", as: "picture", origin: LEPTONICA, pages: ["witten.tif"] },
  { name: "zanotti-78.jpg", as: "picture", origin: LEPTONICA, pages: ["zanotti-78.jpg"] },
  { name: "rabi.png", as: "picture", origin: LEPTONICA, pages: ["rabi.png"] },
  { name: "pageseg.pdf", as: "pdf", origin: LEPTONICA, pages: ["pageseg1.tif", "pageseg2.tif", "pageseg3.tif", "pageseg4.tif"] },
  { name: "table.27.tif", as: "picture", origin: LEPTONICA, pages: ["table.27.tif"] },
  { name: "breviar.38.150.jpg", as: "picture", origin: LEPTONICA, pages: ["breviar.38.150.jpg"] },
  { name: "amoris.2.150.jpg", as: "picture", origin: LEPTONICA, pages: ["amoris.2.150.jpg"] },
  { name: "brothers.150.jpg", as: "picture", origin: LEPTONICA, pages: ["brothers.150.jpg"] },
  { name: "colorpage.030.jpg", as: "picture", origin: LEPTONICA, pages: ["colorpage.030.jpg"] },
  { name: "8087_054.3B.tif", as: "picture", origin: TESSERACT_TEST, pages: ["8087_054.3B.tif"] },
  { name: "eurotext.tif", as: "picture", origin: TESSERACT_TEST, pages: ["eurotext.tif"] },
];

export interface RealPage {
  /** The scan as extracted: what the `tesseract` command reads for this page. */
  file: string;
  /** 1-based page of its document. */
  page: number;
}

export interface RealDocument {
  /** Where the document lies in the share (its own folder, so a search can be narrowed to it). */
  relativePath: string;
  as: "picture" | "pdf" | "tiff";
  pages: RealPage[];
  licence: string;
}

/**
 * The scans extracted under `cacheDir` (their tarballs fetched there first with `apt-get source
 * --download-only` when missing), up to `maxPages` pages (whole documents), and the share laid
 * out under `shareDir`.
 */
export async function realScanShare(cacheDir: string, shareDir: string, maxPages = Infinity): Promise<RealDocument[]> {
  const chosen: typeof REAL_SCAN_DOCUMENTS = [];
  let pages = 0;
  for (const doc of REAL_SCAN_DOCUMENTS) {
    if (pages > 0 && pages + doc.pages.length > maxPages) continue;
    chosen.push(doc);
    pages += doc.pages.length;
  }
  const extracted = new Map<Origin, string>();
  for (const origin of new Set(chosen.map((doc) => doc.origin))) {
    extracted.set(origin, extract(cacheDir, origin, [...new Set(chosen.filter((doc) => doc.origin === origin).flatMap((doc) => doc.pages))]));
  }
  const documents: RealDocument[] = [];
  for (const [i, doc] of chosen.entries()) {
    const dir = extracted.get(doc.origin)!;
    const files = doc.pages.map((name) => path.join(dir, name));
    const relativePath = path.posix.join(`doc-${String(i + 1).padStart(2, "0")}`, doc.name);
    const target = path.join(shareDir, relativePath);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    if (doc.as === "picture") fs.copyFileSync(files[0], target);
    else if (doc.as === "pdf") fs.writeFileSync(target, await scannedPdf(files));
    else {
      // One resolution for every frame (the fixture's writer takes one): the frames are picked to share it.
      const frames = files.map(decodeTiff);
      if (frames.some((frame) => frame.dpi !== frames[0].dpi)) throw new Error(`the frames of ${doc.name} were scanned at different resolutions`);
      fs.writeFileSync(target, toTiff(frames, frames[0].dpi));
    }
    documents.push({ relativePath, as: doc.as, pages: files.map((file, p) => ({ file, page: p + 1 })), licence: doc.origin.licence });
  }
  return documents;
}

/** The named files of one origin's tarball, extracted once into cacheDir/<package>/; their folder. */
function extract(cacheDir: string, origin: Origin, names: string[]): string {
  const out = path.join(cacheDir, origin.sourcePackage);
  const have = (name: string) => fs.existsSync(path.join(out, name));
  if (names.every(have)) return out;
  fs.mkdirSync(cacheDir, { recursive: true });
  let tarball = fs.readdirSync(cacheDir).find((name) => origin.tarball.test(name));
  if (!tarball) {
    try {
      execFileSync("apt-get", ["source", "--download-only", origin.sourcePackage], { cwd: cacheDir, stdio: ["ignore", "ignore", "pipe"] });
    } catch (error) {
      const said = (error as { stderr?: Buffer }).stderr?.toString().trim().split("\n").at(-1) ?? String(error);
      throw new Error(
        `could not fetch Debian's source package ${origin.sourcePackage} (${said}). It needs a deb-src entry: e.g. a file /etc/apt/sources.list.d/debian-src.sources with "Types: deb-src", "URIs: http://deb.debian.org/debian", "Suites: bookworm", "Components: main", "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg", then apt-get update`,
      );
    }
    tarball = fs.readdirSync(cacheDir).find((name) => origin.tarball.test(name));
    if (!tarball) throw new Error(`apt-get source ${origin.sourcePackage} left no tarball matching ${origin.tarball} in ${cacheDir}`);
  }
  const staging = fs.mkdtempSync(path.join(cacheDir, "extract-"));
  try {
    execFileSync("tar", ["-xf", path.join(cacheDir, tarball), "-C", staging, "--wildcards", ...names.map((name) => `*/${origin.folder}/${name}`)], { stdio: ["ignore", "ignore", "pipe"] });
    fs.mkdirSync(out, { recursive: true });
    const top = fs.readdirSync(staging);
    for (const name of names) {
      const found = top.map((dir) => path.join(staging, dir, origin.folder, name)).find((file) => fs.existsSync(file));
      if (!found) throw new Error(`${name} is not in ${tarball}`);
      fs.renameSync(found, path.join(out, name));
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return out;
}

/** A scan's resolution as its file says it (TIFF tags, JFIF density, PNG pHYs), or null when it says none. */
export function declaredDpi(file: string): number | null {
  const bytes = fs.readFileSync(file);
  if (/\.tiff?$/i.test(file)) {
    const [ifd] = UTIF.decode(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
    const x = (ifd.t282 as number[] | undefined)?.[0];
    const unit = (ifd.t296 as number[] | undefined)?.[0] ?? 2;
    return x && x > 1 ? Math.round(unit === 3 ? x * 2.54 : x) : null;
  }
  if (/\.jpe?g$/i.test(file)) {
    // JFIF APP0: "JFIF\0", version, units (1: per inch, 2: per cm), Xdensity.
    const at = bytes.indexOf("JFIF\0", 0, "latin1");
    if (at < 0) return null;
    const units = bytes[at + 7];
    const x = bytes.readUInt16BE(at + 8);
    return units === 0 || x <= 1 ? null : Math.round(units === 2 ? x * 2.54 : x);
  }
  const at = bytes.indexOf("pHYs", 0, "latin1");
  if (at < 0 || bytes[at + 12] !== 1) return null; // unit 1: metre
  return Math.round(bytes.readUInt32BE(at + 4) * 0.0254);
}

/** A TIFF's first frame in 8-bit gray (utif decodes G4 and the rest). */
function decodeTiff(file: string): GrayImage & { dpi: number } {
  const bytes = fs.readFileSync(file);
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const [ifd] = UTIF.decode(buffer);
  UTIF.decodeImage(buffer, ifd);
  const rgba = UTIF.toRGBA8(ifd);
  const pixels = new Uint8Array(ifd.width * ifd.height);
  for (let i = 0; i < pixels.length; i++) pixels[i] = rgba[i * 4];
  return { width: ifd.width, height: ifd.height, pixels, dpi: declaredDpi(file) ?? 300 };
}

/**
 * A scanned PDF: one page per scan, the page the size the scan was made at (its resolution, 300
 * dpi where it says none), no text. A JPEG goes in as it is (DCTDecode, as scanners write it); a
 * PNG as pdf-lib embeds it; a TIFF's pixels Flate-compressed, 1 bit per pixel when it is black and
 * white (as a scanner's bilevel page), else 8-bit gray.
 */
async function scannedPdf(files: string[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  for (const file of files) {
    if (/\.(jpe?g|png)$/i.test(file)) {
      await addPictureFilePage(doc, file, declaredDpi(file) ?? 300);
      continue;
    }
    const gray = decodeTiff(file);
    const bilevel = gray.pixels.every((v) => v === 0 || v === 255);
    const picture = doc.context.register(
      doc.context.stream(zlib.deflateSync(bilevel ? packBits(gray) : gray.pixels), {
        Type: "XObject",
        Subtype: "Image",
        Width: gray.width,
        Height: gray.height,
        ColorSpace: "DeviceGray",
        BitsPerComponent: bilevel ? 1 : 8,
        Filter: "FlateDecode",
      }),
    );
    const page = doc.addPage([(gray.width * 72) / gray.dpi, (gray.height * 72) / gray.dpi]);
    const name = page.node.newXObject("Scan", picture);
    page.pushOperators(pushGraphicsState(), concatTransformationMatrix(page.getWidth(), 0, 0, page.getHeight(), 0, 0), drawObject(name), popGraphicsState());
  }
  return doc.save();
}

/** 8-bit black-and-white pixels as 1 bit per pixel, rows padded to a byte (PDF's DeviceGray: 1 is white). */
function packBits(image: GrayImage): Uint8Array {
  const rowBytes = Math.ceil(image.width / 8);
  const out = new Uint8Array(rowBytes * image.height);
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) if (image.pixels[y * image.width + x] === 255) out[y * rowBytes + (x >> 3)] |= 0x80 >> (x & 7);
  }
  return out;
}
