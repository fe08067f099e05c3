import fs from "node:fs";
import path from "node:path";
import type { WrappedPdfiumModule } from "@embedpdf/pdfium";
import { corruptFile } from "../failures";
import { ParseError } from "../parse-types";

/**
 * PDFium (Chrome's PDF engine, compiled to WebAssembly by @embedpdf/pdfium) for the parser
 * threads: one instance per thread, made on first use and replaced when a file left its linear
 * memory large. WebAssembly memory only ever grows, so without that a thread would keep the
 * biggest PDF's peak for the rest of its life.
 */

/**
 * recycleGrowthMb: after a file, an instance whose memory grew more than this past its starting
 * size (about 18 MB) is dropped; the next file gets a fresh one. A fresh instance costs ~8 ms
 * (the compiled module is kept), and most PDFs never grow it: on the real corpus's 40 largest
 * PDFs, 3 were followed by a fresh instance (+24 ms in ~15 s), where a 64 MB threshold let
 * the thread's instance stay at 37 MB for the rest of the job.
 * maxMb: no PDF may grow an instance past this: its allocations fail and the file fails alone.
 * Tests change them (recycleGrowthMb -1: every file gets a fresh instance); an instance takes
 * maxMb when it is made.
 */
export const pdfiumLimits = { recycleGrowthMb: 4, maxMb: 256 };

/** PDFium's exports called once per character: straight into the module, no argument conversion. */
export interface PdfiumRaw {
  malloc(size: number): number;
  free(ptr: number): void;
  FPDFText_GetUnicode(textPage: number, index: number): number;
  FPDFText_IsGenerated(textPage: number, index: number): number;
  FPDFText_GetTextObject(textPage: number, index: number): number;
  FPDFText_GetLooseCharBox(textPage: number, index: number, rectF: number): number;
  FPDFText_GetFontSize(textPage: number, index: number): number;
}

export interface Pdfium {
  api: WrappedPdfiumModule;
  raw: PdfiumRaw;
  /** The instance's memory as bytes; re-read after every call into PDFium (growing replaces it). */
  heapU8(): Uint8Array;
  heapF32(): Float32Array;
  /** The memory limit this instance was made with. */
  maxMb: number;
  /** The instance's memory size once started, in bytes. */
  startBytes: number;
  /** Whether PDFium asked for memory past that limit (and was refused) during the current file. */
  growth: { refused: boolean };
}

/** Node's WebAssembly global, which the project's TypeScript libraries (no DOM) do not declare. */
interface WasmGlobal {
  compile(bytes: Uint8Array): Promise<WasmModule>;
  instantiate(module: WasmModule, imports: WasmImports): Promise<WasmInstance>;
  RuntimeError: new (message?: string) => Error;
}
type WasmModule = object;
type WasmInstance = object;
type WasmImports = Record<string, Record<string, unknown>>;
const Wasm = (globalThis as unknown as { WebAssembly: WasmGlobal }).WebAssembly;

/** Whether `err` is PDFium stopping (abort: out of memory or a broken invariant): its instance is unusable. */
export function isPdfiumAbort(err: unknown): err is Error {
  return err instanceof Wasm.RuntimeError;
}

let compiled: Promise<WasmModule> | null = null;
let current: Promise<Pdfium> | null = null;

/**
 * The .wasm ships inside the npm package (no download at install or run time). In the packaged
 * app it is unpacked beside app.asar (electron-builder.yml, asarUnpack), like every file a
 * worker thread reads from disk.
 */
export function pdfiumWasmPath(resolved = require.resolve("@embedpdf/pdfium/pdfium.wasm")): string {
  return resolved.replace(`app.asar${path.sep}`, `app.asar.unpacked${path.sep}`);
}

async function instantiate(): Promise<Pdfium> {
  const growth = { refused: false };
  compiled ??= fs.promises.readFile(pdfiumWasmPath()).then((bytes) => Wasm.compile(bytes));
  const wasm = await compiled;
  // Loaded on the first PDF: a parser thread that never sees one does not load it.
  const { init } = require("@embedpdf/pdfium") as typeof import("@embedpdf/pdfium");
  const api = await init({
    print: () => undefined, // PDFium's own diagnostics are not the user's business
    printErr: () => undefined,
    instantiateWasm(imports: WasmImports, receive: (instance: WasmInstance, module: WasmModule) => void) {
      // Cap the instance's memory: a request to grow past the limit fails, so the allocation
      // inside PDFium fails (it aborts), and only the file being read fails.
      const env = imports.env;
      const grow = env.emscripten_resize_heap as (bytes: number) => number;
      const maxBytes = pdfiumLimits.maxMb * 2 ** 20;
      env.emscripten_resize_heap = (bytes: number) => {
        if ((bytes >>> 0) <= maxBytes) return grow(bytes);
        growth.refused = true;
        return 0;
      };
      void Wasm.instantiate(wasm, imports).then((instance) => receive(instance, wasm));
      return {};
    },
  } as Parameters<typeof init>[0]);
  api.PDFiumExt_Init();
  const module = api.pdfium as unknown as { wasmExports: PdfiumRaw; HEAPU8: Uint8Array; HEAPF32: Float32Array };
  const startBytes = module.HEAPU8.length;
  return { api, raw: module.wasmExports, heapU8: () => module.HEAPU8, heapF32: () => module.HEAPF32, maxMb: pdfiumLimits.maxMb, startBytes, growth };
}

/**
 * Runs `use` with this thread's PDFium. An instance that aborted (out of memory, or a bug hit
 * by a malformed file) is unusable and is dropped, as is one whose memory grew more than
 * pdfiumLimits.recycleGrowthMb, so the memory goes back once the file is done.
 */
export async function withPdfium<T>(use: (pdfium: Pdfium) => T | Promise<T>): Promise<T> {
  if (!current) {
    current = instantiate();
    current.catch(() => (current = null)); // a failed start is retried by the next file
  }
  const pdfium = await current;
  pdfium.growth.refused = false;
  try {
    // Awaited here, so an abort while a page waits for OCR is still this file's.
    return await use(pdfium);
  } catch (err) {
    if (isPdfiumAbort(err)) {
      current = null;
      // PDFium aborts when an allocation fails, and on a few malformed files: the abort says which.
      throw pdfium.growth.refused ? outOfMemory(pdfium) : corruptFile("PDF");
    }
    throw err;
  } finally {
    if (current && pdfium.heapU8().length - pdfium.startBytes > pdfiumLimits.recycleGrowthMb * 2 ** 20) current = null;
  }
}

/** The failure of a PDF that needs more memory than an instance may have. */
export function outOfMemory(pdfium: Pdfium): ParseError {
  return new ParseError(`PDF parsing ran out of memory (limit ${pdfium.maxMb} MB)`);
}

/** The current instance's memory size in bytes, 0 before the first PDF: for tests. */
export async function pdfiumMemoryBytes(): Promise<number> {
  return current ? (await current).heapU8().length : 0;
}
