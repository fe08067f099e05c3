import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pageOpenCommand } from "../../main/open-location";

// The desktop's Open at a hit's page (issue 35): only PDF viewers known to take a page on their
// command line, only a whole page number, only a PDF; anything else opens the file as before.
describe("Open at a page", () => {
  it("starts the default viewer at the page where it takes one", () => {
    assert.deepEqual(pageOpenCommand("org.gnome.Evince.desktop\n", "/srv/docs/manual.pdf", 7), { command: "evince", args: ["--page-index=7", "/srv/docs/manual.pdf"] });
    assert.deepEqual(pageOpenCommand("okularApplication_pdf.desktop", "/srv/a.PDF", 3), { command: "okular", args: ["-p", "3", "/srv/a.PDF"] });
    assert.deepEqual(pageOpenCommand("org.pwmt.zathura.desktop", "/srv/a.pdf", 2), { command: "zathura", args: ["-P", "2", "/srv/a.pdf"] });
  });

  it("otherwise opens the file: another viewer, another type, no page or a page that is not a page number", () => {
    assert.equal(pageOpenCommand("firefox.desktop", "/srv/a.pdf", 7), null);
    assert.equal(pageOpenCommand("org.gnome.Evince.desktop", "/srv/a.tiff", 2), null);
    for (const page of [null, 0, -1, 1.5, "7", 2_000_000]) assert.equal(pageOpenCommand("org.gnome.Evince.desktop", "/srv/a.pdf", page), null, String(page));
  });
});
