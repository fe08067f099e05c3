import { unzipSync, type Unzipped } from "fflate";
import { corruptFile, tooLargeUnpacked } from "../failures";
import { ParseError } from "../parse-types";
import { attr, elements } from "./xml";

// Unzipped parts live in ArrayBuffers, outside the worker's V8 heap limit: refuse zip bombs up front.
const MAX_UNZIPPED_BYTES = 512 * 1024 * 1024;

/** The parts of a zip package that `wanted` picks, inflated. `what` names the format in errors. */
export function openZip(bytes: Uint8Array, what: string, wanted: (name: string) => boolean): Unzipped {
  let declared = 0;
  try {
    return unzipSync(bytes, {
      filter: (file) => {
        declared += file.originalSize;
        if (declared > MAX_UNZIPPED_BYTES) throw tooLargeUnpacked(`${what} file`, MAX_UNZIPPED_BYTES);
        return wanted(file.name);
      },
    });
  } catch (err) {
    if (err instanceof ParseError) throw err;
    throw corruptFile(`${what} file`);
  }
}

export function zipText(zip: Unzipped, name: string): string {
  const data = zip[name];
  return data ? new TextDecoder("utf-8").decode(data) : "";
}

/** Relationship id -> part name, resolved against baseDir ("ppt/", "xl/"). */
export function relationships(zip: Unzipped, relsPart: string, baseDir: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const rel of elements(zipText(zip, relsPart), "Relationship")) {
    const id = attr(rel.attrs, "Id");
    const target = attr(rel.attrs, "Target");
    if (!id || !target || attr(rel.attrs, "TargetMode") === "External") continue;
    map.set(id, target.startsWith("/") ? target.slice(1) : normalisePartName(baseDir + target));
  }
  return map;
}

/** "a/b/../c.xml" -> "a/c.xml"; "./" and empty segments dropped. */
export function normalisePartName(name: string): string {
  const out: string[] = [];
  for (const segment of name.split("/")) {
    if (segment === "..") out.pop();
    else if (segment !== "." && segment !== "") out.push(segment);
  }
  return out.join("/");
}

export function isZip(bytes: Uint8Array): boolean {
  return bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;
}
