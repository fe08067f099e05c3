/** How numbers, sizes, times and durations read on every screen: one place for each. */

const BINARY_UNITS = ["B", "KB", "MB", "GB", "TB"];
const DECIMAL_UNITS = ["bytes", "kB", "MB", "GB", "TB"];

/**
 * "1.4 MB": binary units (1 KB = 1024 B) as file and download sizes show; `decimal` writes
 * free space as the server's own messages do ("1.4 MB" of 1000s, server/disk/disk-space.ts).
 */
export function formatBytes(bytes: number | null | undefined, units: "binary" | "decimal" = "binary"): string {
  if (bytes === null || bytes === undefined) return "—";
  const base = units === "binary" ? 1024 : 1000;
  const names = units === "binary" ? BINARY_UNITS : DECIMAL_UNITS;
  let value = bytes;
  let unit = 0;
  while (value >= base && unit < names.length - 1) {
    value /= base;
    unit++;
  }
  if (unit === 0) return units === "binary" ? `${value.toFixed(0)} B` : `${bytes} bytes`;
  return `${value.toFixed(1)} ${names[unit]}`;
}

/** Server timestamps are UTC without a zone offset. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : `${iso}Z`);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** "45 s", "12 min", "2 h 5 min": a time left or taken. */
export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.max(1, Math.round(seconds))} s`;
  const minutes = Math.round(seconds / 60);
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

type Place = { page?: number | null; location_label?: string | null; from_scan?: boolean };

/**
 * Where a passage is in its document, in the fewest words: "p. 7" for a page, "slide 3",
 * "sheet Budget" (the server's `location_label` otherwise). Citations show this much, so a slide
 * is never cited as a page (docs/decisions/0498-citations-name-the-place.md). Empty when unpaged.
 */
export function formatWhere(place: Place): string {
  const label = place.location_label ?? "";
  return /^page \d+$/.test(label) && place.page ? `p. ${place.page}` : label;
}

/**
 * Where a passage is, as results and the cited passage show it: formatWhere, with ", from a
 * scan" when OCR read it. Empty for an unpaged passage that no scan gave.
 */
export function formatPlace(place: Place): string {
  return [formatWhere(place), place.from_scan ? "from a scan" : ""].filter(Boolean).join(", ");
}
