import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { FolderPathError, checkSourceFolder, isInside, normaliseFolderPath } from "../../server/connectors/folder/folder-roots";
import { tempDir } from "../fixtures/sluice-server";

const root = fs.realpathSync(tempDir("sluice-roots-"));
const sibling = `${root}-sibling`;
fs.mkdirSync(path.join(root, "inside"));
fs.mkdirSync(sibling);
after(() => {
  fs.rmSync(root, { recursive: true, force: true });
  fs.rmSync(sibling, { recursive: true, force: true });
});

describe("folder source roots", () => {
  it("inside means the root itself or under it, never a sibling that shares its prefix", () => {
    assert.equal(isInside(root, root), true);
    assert.equal(isInside(path.join(root, "a", "b"), root), true);
    assert.equal(isInside(sibling, root), false);
    assert.equal(isInside(path.dirname(root), root), false);
    assert.equal(isInside(path.join(root, "..foo"), root), true, "a name starting with two dots is still inside");
  });

  it("normalises absolute paths and refuses relative ones and '..' segments", () => {
    assert.equal(normaliseFolderPath(`${root}/inside/`), path.join(root, "inside"));
    assert.throws(() => normaliseFolderPath("inside"), FolderPathError);
    assert.throws(() => normaliseFolderPath(`${root}/inside/..`), /"\.\." segments/);
    assert.throws(() => normaliseFolderPath(`${root}\\..\\x`), /"\.\." segments/);
  });

  it("answers the real path of a folder inside a root; refuses a sibling with the root's name as prefix and an unknown root", async () => {
    assert.equal(await checkSourceFolder(path.join(root, "inside"), [root]), path.join(root, "inside"));
    await assert.rejects(checkSourceFolder(sibling, [root]), /outside the folders this machine allows/);
    await assert.rejects(checkSourceFolder(path.join(root, "inside"), [path.join(root, "not-there")]), /outside/);
  });
});
