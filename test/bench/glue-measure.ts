import type { Writable } from "node:stream";

/**
 * The real bench's comparison of a file's words with a reference extraction of the same file
 * (pdftotext, a browser-like innerText): indexed words that are two neighbouring reference words
 * run together, sorted into glue (ours) and the kinds that are not glue, each counted and listed
 * apart, never dropped.
 */

/** Words as the index tokenizer sees them (unicode61, diacritics removed, lower case). */
export function tokens(text: string): string[] {
  return normalized(text)
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

/** Text as words are compared: decomposed, without accents, lower case. */
function normalized(text: string): string {
  return text.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
}

/**
 * Where a split is not a word boundary in the script: Thai writes no space between words, so a
 * break pdftotext puts between two Thai runs (it splits at its stacked vowel and tone marks:
 * "สน|บสนน") marks no word; Arabic-script letters that never join the next one (alef, dal, thal,
 * reh, zain, waw, teh marbuta, alef maksura, Urdu yeh barree) leave a visual gap inside a word,
 * which pdftotext reads as a space ("تار|يخية", "tārīkhiyya").
 */
const THAI = /^\p{Script=Thai}+$/u;
const ARABIC = /^\p{Script=Arabic}+$/u;
const ARABIC_NON_JOINING = /[\u0627\u0622\u0623\u0625\u062f\u0630\u0631\u0632\u0648\u0629\u0649\u0698\u0688\u0691\u06d2]$/u;
function splitInsideScript(left: string, right: string): boolean {
  return (THAI.test(left) && THAI.test(right)) || (ARABIC.test(left) && ARABIC.test(right) && ARABIC_NON_JOINING.test(left));
}

/** A hyphen ending a line, and the line break: what is left between the halves of a hyphenated word. */
const LINE_END_HYPHEN = /^[^\S\n]*[-\u00ad\u2010][^\S\n]*\n\s*$/;

/** Each kind of run-together word, as the reports name it. Only `glued` is glue of ours. */
const GLUE_KINDS = {
  glued: "words glued to a neighbour",
  rejoined: "words joined at a line-end hyphen the reference leaves split (not glue)",
  inside: "two neighbours' letters, split out of a longer reference word (not glue)",
  script: "a word of Thai or Arabic script the reference splits where the script has no word break (not glue)",
} as const;
export type GlueKind = keyof typeof GLUE_KINDS;
export type GlueResult = Record<GlueKind, string[]>;

/**
 * Indexed words not in the reference that are two neighbouring reference words run together,
 * as "left|right". Both parts must be words of 2+ letters: single letters and digits run
 * together by layout (list numbers, footnote marks) would count noise. Where the reference
 * leaves a hyphen at a line end between the two ("map-" then "ping", which pdftotext keeps apart
 * when the lines fall in different blocks), the indexed word is the hyphenated word joined
 * again, not glue: those are `rejoined`, counted apart. So are indexed words found inside a longer
 * reference word (`inside`: "filename" where the reference reads "hfilenamei", the angle brackets
 * of TeX's ⟨filename⟩ with no Unicode): the extraction split that word; the pair elsewhere in the
 * reference ("file name") is a coincidence. Pairs split where their script has no word break
 * (splitInsideScript) are `script`. With `rawReference` (pdftotext -raw of a PDF), a pair that
 * reading splits at a line-end hyphen everywhere is `rejoined` too.
 */
export function gluedWords(reference: string, indexed: Iterable<string>, rawReference?: string): GlueResult {
  const text = normalized(reference);
  const known = new Set(Array.from(text.matchAll(/[\p{L}\p{N}]+/gu), (m) => m[0]));
  const pairs = neighbourPairs(text);
  // pdftotext's raw reading keeps every line end as drawn, where its default reading may drop a
  // line-end hyphen and still set the halves apart ("can" ... "not" in showkeys.pdf; -raw: "can-" / "not").
  let rawPairs: ReturnType<typeof neighbourPairs> | undefined; // read only where a pair is found
  const found: Record<GlueKind, Set<string>> = { glued: new Set(), rejoined: new Set(), inside: new Set(), script: new Set() };
  let vocabulary: string | undefined; // every reference word once, spaced: a word not in it whole is inside a longer one
  for (const w of indexed) {
    const p = known.has(w) ? undefined : pairs.get(w);
    if (!p) continue;
    vocabulary ??= ` ${[...known].join(" ")} `;
    if (rawReference !== undefined) rawPairs ??= neighbourPairs(normalized(rawReference));
    found[p.hyphenated || rawPairs?.get(w)?.hyphenated ? "rejoined" : vocabulary.includes(w) ? "inside" : p.script ? "script" : "glued"].add(p.pair);
  }
  return { glued: [...found.glued], rejoined: [...found.rejoined], inside: [...found.inside], script: [...found.script] };
}

/**
 * Each pair of neighbouring words of 2+ letters in normalised text, keyed by the two run
 * together: `hyphenated` when every occurrence is split by a hyphen at a line end.
 */
function neighbourPairs(text: string): Map<string, { pair: string; hyphenated: boolean; script: boolean }> {
  const words = [...text.matchAll(/[\p{L}\p{N}]+/gu)];
  const pairs = new Map<string, { pair: string; hyphenated: boolean; script: boolean }>();
  const word = (w: string) => w.length >= 2 && /^\p{L}+$/u.test(w);
  for (let i = 0; i + 1 < words.length; i++) {
    const [left, right] = [words[i][0], words[i + 1][0]];
    if (!word(left) || !word(right)) continue;
    const between = text.slice(words[i].index! + left.length, words[i + 1].index);
    const seen = pairs.get(left + right);
    // A pair seen both ways counts as glue: some occurrence was not a hyphenated line end.
    pairs.set(left + right, { pair: `${left}|${right}`, hyphenated: LINE_END_HYPHEN.test(between) && (seen?.hyphenated ?? true), script: splitInsideScript(left, right) });
  }
  return pairs;
}

/** Every file's run-together words by kind, kept whole so a report can list them all. */
export class GlueTally {
  private readonly byKind = new Map<GlueKind, Array<{ file: string; type: string; pairs: string[] }>>();

  add(file: { rel: string; type: string }, result: GlueResult): void {
    for (const kind of Object.keys(GLUE_KINDS) as GlueKind[]) {
      if (!result[kind].length) continue;
      const list = this.byKind.get(kind) ?? [];
      list.push({ file: file.rel, type: file.type, pairs: result[kind] });
      this.byKind.set(kind, list);
    }
  }

  words(kind: GlueKind): number {
    return (this.byKind.get(kind) ?? []).reduce((n, f) => n + f.pairs.length, 0);
  }

  files(kind: GlueKind): number {
    return this.byKind.get(kind)?.length ?? 0;
  }

  /** The table rows: each kind's words and files. */
  rows(): Array<[string, string]> {
    return (Object.keys(GLUE_KINDS) as GlueKind[]).map((kind) => [GLUE_KINDS[kind], `${this.words(kind)} in ${this.files(kind)} files`]);
  }

  /**
   * Each kind with words: glue by file type with five examples (one a file), the others five
   * examples; with `all`, every file and every pair of it instead.
   */
  print(out: Writable, all: boolean): void {
    for (const kind of Object.keys(GLUE_KINDS) as GlueKind[]) {
      const list = this.byKind.get(kind);
      if (!list) continue;
      out.write(`\n${GLUE_KINDS[kind]}: ${this.words(kind)} in ${list.length} files\n`);
      if (all) {
        for (const f of list) out.write(`  ${f.file}: ${f.pairs.join(" ")}\n`);
        continue;
      }
      const types = kind === "glued" ? [...new Set(list.map((f) => f.type))] : [null];
      for (const type of types) {
        const files = list.filter((f) => type === null || f.type === type);
        const examples = files.slice(0, 5).map((f) => `${f.pairs[0]} (${f.file})`);
        out.write(`  ${type === null ? "" : `${type}: ${files.reduce((n, f) => n + f.pairs.length, 0)} words in ${files.length} files, `}e.g. ${examples.join("; ")}\n`);
      }
    }
  }
}
