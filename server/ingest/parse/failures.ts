import { ParseError } from "./parse-types";

// Every format's failures read the same way to a user (docs/user-guide.md: Failed and skipped files): what the file is,
// not what the parser library said. One place, so the wording stays consistent.

/** The file is not what its extension says, or is damaged. `what`: "PDF", "DOCX package", ... */
export function corruptFile(what: string): ParseError {
  return new ParseError(`corrupt file (not a valid ${what})`);
}

/** The file is encrypted with a password; Sluice cannot read it without one. */
export function passwordProtected(what: string): ParseError {
  return new ParseError(`password-protected ${what}`);
}

/** A container format that unpacks to more than the limit (a zip bomb, or simply too big). */
export function tooLargeUnpacked(what: string, limitBytes: number): ParseError {
  return new ParseError(`${what} is too large when unzipped (over ${limitBytes / 2 ** 20} MB)`);
}
