/** The wire format of every timestamp: ISO 8601 in UTC without a zone offset (docs/decisions/0003-wire-conventions.md). */
export function isoNoZone(date: Date | null | undefined): string | null {
  if (!date) return null;
  return date.toISOString().replace(/Z$/, "");
}
