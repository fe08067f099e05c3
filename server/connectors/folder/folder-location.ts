import path from "node:path";
import { pathToFileURL } from "node:url";
import type { DocumentLocation } from "../source-kind";

/** A file of a folder source: its absolute path on this machine and its `file://` URL. */
export function folderLocation(folder: string, documentPath: string): DocumentLocation {
  const absolute = path.join(folder, ...documentPath.split("/"));
  return { path: absolute, url: pathToFileURL(absolute).href };
}
