// Item: the real bench's glue measure counts only true glue (issue 14, item 4).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { gluedWords } from "../bench/glue-measure";

describe("the real bench's glued-word measure", () => {
  it("counts an indexed word made of two neighbouring reference words as glue", () => {
    const reference = "libsecret-tools V:1 secret-tool\nstore and retrieve passwords";
    assert.deepEqual(gluedWords(reference, ["secret", "toolstore", "and", "retrieve"]), { glued: ["tool|store"], rejoined: [], inside: [], script: [] });
  });

  it("counts apart a hyphenated word joined again where the reference leaves it split at the line end", () => {
    const reference = "the file-to-maintainer map-\n\nping. The trailing space";
    assert.deepEqual(gluedWords(reference, ["the", "mapping", "trailing"]), { glued: [], rejoined: ["map|ping"], inside: [], script: [] });
    // The same pair also run together mid-line somewhere: that occurrence is glue.
    assert.deepEqual(gluedWords(`${reference} map ping`, ["mapping"]).glued, ["map|ping"]);
  });

  it("counts apart a word the extraction split out of a longer reference word", () => {
    // TeX's ⟨filename⟩ reads "hfilenamei" in the reference; "file name" elsewhere is a coincidence.
    const reference = "an external file hfilenamei. One file name argument.";
    assert.deepEqual(gluedWords(reference, ["external", "filename"]), { glued: [], rejoined: [], inside: ["file|name"], script: [] });
  });

  it("counts apart a Thai or Arabic word the reference split where the script has no word break, and only those", () => {
    // pdftotext splits تاريخية after reh (which never joins the next letter) and Thai at its marks.
    const reference = "تار يخية قديمة\nสน บสนน\nكتب مكتبة";
    const { glued, script } = gluedWords(reference, ["تاريخية", "สนบสนน", "كتبمكتبة"]);
    assert.deepEqual(script, ["تار|يخية", "สน|บสนน"]);
    assert.deepEqual(glued, ["كتب|مكتبة"], "two Arabic words after a joining letter are still glue");
  });

  it("counts apart a word joined at a line-end hyphen that pdftotext's raw reading shows, where its default reading dropped the hyphen", () => {
    // showkeys.pdf: the default reading has "can" and "not" in separate blocks, no hyphen; -raw keeps "can-" at the line end.
    const reference = "we can\n\n\nnot use it";
    assert.deepEqual(gluedWords(reference, ["cannot"]).glued, ["can|not"], "without the raw reading it looks glued");
    assert.deepEqual(gluedWords(reference, ["cannot"], "we can-\nnot use it"), { glued: [], rejoined: ["can|not"], inside: [], script: [] });
    // A raw reading that also has the pair apart mid-line does not excuse it.
    assert.deepEqual(gluedWords(reference, ["cannot"], "we can-\nnot use it, can not").glued, ["can|not"]);
  });
});
