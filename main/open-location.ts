import fs from "node:fs/promises";
import { formatOf } from "../server/ingest/parse/file-types";

/**
 * What the desktop app's "Open" on a search result may open: a document Sluice could have
 * indexed, where this machine reaches it. The renderer passes the result's `location`
 * ({path, url} as the search API answered it); nothing else is ever opened, so a page that
 * got hold of the bridge cannot launch a program, open a web page or a folder full of them.
 */
export interface ShownLocation {
  path: string | null;
  url: string | null;
}

export type OpenTarget = { kind: "path"; path: string } | { kind: "url"; url: string } | { kind: "refused"; reason: string };

/** Longer than any path a file server hands out; anything beyond is not a location Sluice made. */
const MAX_LENGTH = 4096;

/** Control characters (NUL, newlines, DEL, ...) never appear in a location Sluice made; they could cut or bend a path. */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** Sluice indexes these types only, so a result is always one of them; programs, scripts and shortcuts never are. */
function isIndexedType(fileName: string): boolean {
  return formatOf(fileName) !== null;
}

/** No ".", ".." or empty segments: the path names the file itself, not a way around it. */
function cleanSegments(segments: string[]): boolean {
  return segments.length > 0 && segments.every((s) => s !== "" && s !== "." && s !== "..");
}

/**
 * A path this platform opens: on Windows `\\server\share\…\file` (not `\\?\` or `\\.\` device
 * paths) or `C:\…\file`; elsewhere an absolute `/…/file` (a folder source's document).
 */
export function openablePath(candidate: unknown, platform: NodeJS.Platform): string | null {
  if (typeof candidate !== "string" || candidate.length > MAX_LENGTH || hasControlCharacter(candidate)) return null;
  if (!isIndexedType(candidate)) return null;
  if (platform === "win32") {
    const unc = /^\\\\([^\\/]+)\\([^\\/]+)\\(.+)$/.exec(candidate);
    if (unc) {
      if (unc[1] === "?" || unc[1] === ".") return null;
      return cleanSegments(unc[3].split(/[\\/]/)) ? candidate : null;
    }
    const drive = /^[A-Za-z]:\\(.+)$/.exec(candidate);
    return drive && cleanSegments(drive[1].split(/[\\/]/)) ? candidate : null;
  }
  if (!candidate.startsWith("/") || candidate.includes("\\")) return null;
  return cleanSegments(candidate.slice(1).split("/")) ? candidate : null;
}

/** An `smb://server[:port]/share/…/file` URL (no credentials, query or fragment) to a document type Sluice indexes. */
export function openableSmbUrl(candidate: unknown): string | null {
  if (typeof candidate !== "string" || candidate.length > MAX_LENGTH || hasControlCharacter(candidate)) return null;
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return null;
  }
  if (url.protocol !== "smb:" || !url.hostname || url.username || url.password || url.search || url.hash) return null;
  let segments: string[];
  try {
    segments = url.pathname.slice(1).split("/").map(decodeURIComponent);
  } catch {
    return null;
  }
  // A share and a file at least; the URL parser already resolved any dot segments away.
  if (segments.length < 2 || !cleanSegments(segments) || segments.some((s) => s.includes("/") || s.includes("\\"))) return null;
  return isIndexedType(segments[segments.length - 1]) ? url.href : null;
}

/**
 * Which form of a shown location to open on this platform: the path where the platform opens
 * it (Windows: the UNC or drive path; elsewhere a local absolute path), else the smb:// URL
 * (macOS Finder and Linux file managers mount it). Refused with a reason a person can read.
 */
export function openTarget(location: unknown, platform: NodeJS.Platform): OpenTarget {
  if (typeof location !== "object" || location === null) return { kind: "refused", reason: "Not a document location." };
  const { path, url } = location as Partial<ShownLocation>;
  const byPath = openablePath(path, platform);
  if (byPath) return { kind: "path", path: byPath };
  const byUrl = platform === "win32" ? null : openableSmbUrl(url);
  if (byUrl) return { kind: "url", url: byUrl };
  return { kind: "refused", reason: "This document cannot be opened from here. Copy its location instead." };
}

/** A local or UNC path must name an existing file (not a folder) before the shell is asked to open it. */
export async function isExistingFile(path: string): Promise<boolean> {
  try {
    return (await fs.stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * PDF viewers whose command line opens a file at a page (1-based), by the name in their desktop
 * entry (`xdg-mime query default application/pdf`: "org.gnome.Evince.desktop"). The system's own
 * "open" on Windows and macOS takes no page, so there Open opens the file.
 */
const PAGE_ARGUMENTS: Array<[name: string, args: (page: number, file: string) => string[]]> = [
  ["evince", (page, file) => [`--page-index=${page}`, file]],
  ["atril", (page, file) => [`--page-index=${page}`, file]],
  ["xreader", (page, file) => [`--page-index=${page}`, file]],
  ["okular", (page, file) => ["-p", String(page), file]],
  ["zathura", (page, file) => ["-P", String(page), file]],
];

/** How to open `file` at `page` with the default PDF viewer named by its desktop entry, or null where it takes no page (then: open the file). */
export function pageOpenCommand(desktopEntry: string, file: string, page: unknown): { command: string; args: string[] } | null {
  if (!Number.isInteger(page) || (page as number) < 1 || (page as number) > 1_000_000 || !/\.pdf$/i.test(file)) return null;
  const entry = desktopEntry.trim().toLowerCase();
  const viewer = PAGE_ARGUMENTS.find(([name]) => entry.includes(name));
  return viewer ? { command: viewer[0], args: viewer[1](page as number, file) } : null;
}
