import crypto from "node:crypto";

/** The auto-provisioned collection of a source: `<slug-of-source-name>_<8 hex chars>` (docs/decisions/0005-data-source-creation.md). */
export function autoCollectionName(sourceName: string): string {
  const slug =
    sourceName
      .normalize("NFKD")
      .replace(/[\u0300-\u036f]/g, "")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "_")
      .replace(/^_+|_+$/g, "")
      .slice(0, 60) || "source";
  return `${slug}_${crypto.randomBytes(4).toString("hex")}`;
}
