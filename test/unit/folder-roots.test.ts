import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { checkSourceFolder, isInside, normaliseFolderPath } from "../../server/connectors/folder/folder-roots";
import { FolderPathError, type FolderRules, folderRefusal } from "../../server/connectors/folder/folder-rules";
import { tempDir } from "../fixtures/sluice-server";

// Real folders: a root with a folder inside, a sibling sharing the root's name as a prefix, a
// second root, Sluice's data folder under the first root, a dot-folder, and links between them.
const root = fs.realpathSync(tempDir("sluice-roots-"));
const sibling = `${root}-sibling`;
const other = fs.realpathSync(tempDir("sluice-roots-other-"));
const dataDir = path.join(root, "sluice-data");
for (const dir of [path.join(root, "inside", "deeper"), sibling, dataDir, path.join(dataDir, "indexes"), path.join(root, ".ssh"), path.join(other, "docs")]) fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(root, "a-file.txt"), "a file, not a folder");
fs.symlinkSync(sibling, path.join(root, "link-out"));
fs.symlinkSync(path.join(other, "docs"), path.join(root, "link-to-other-root"));
fs.symlinkSync(dataDir, path.join(root, "link-to-data"));
fs.symlinkSync(path.join(root, ".ssh"), path.join(root, "link-to-dot"));
after(() => {
  for (const dir of [root, sibling, other]) fs.rmSync(dir, { recursive: true, force: true });
});

const rules: FolderRules = { roots: [root], dataDir, dotfiles: "skip" };
const refusal = `path ${folderRefusal(rules)}`;

async function refusalOf(requested: string, withRules = rules): Promise<string> {
  try {
    await checkSourceFolder(requested, withRules);
  } catch (error) {
    assert.ok(error instanceof FolderPathError, String(error));
    return error.message;
  }
  assert.fail(`${requested} was accepted`);
}

describe("folder source roots", () => {
  it("inside means the root itself or under it, never a sibling that shares its prefix", () => {
    assert.equal(isInside(root, root), true);
    assert.equal(isInside(path.join(root, "a", "b"), root), true);
    assert.equal(isInside(sibling, root), false);
    assert.equal(isInside(path.dirname(root), root), false);
    assert.equal(isInside(path.join(root, "..foo"), root), true, "a name starting with two dots is still inside");
  });

  it("normalises absolute paths, '..' segments lexically, and refuses relative paths and NUL characters by their text alone", () => {
    assert.equal(normaliseFolderPath(`${root}/inside/`), path.join(root, "inside"));
    assert.equal(normaliseFolderPath(`${root}/inside/../inside/deeper`), path.join(root, "inside", "deeper"));
    assert.equal(normaliseFolderPath(`${root}/../${path.basename(sibling)}`), sibling);
    assert.throws(() => normaliseFolderPath("inside"), /must be an absolute folder path/);
    assert.throws(() => normaliseFolderPath(`${root}/in\0side`), /NUL characters/);
  });

  it("answers the real path of a folder inside a root, a link whose real path stays inside, and a '..' that stays inside", async () => {
    assert.equal(await checkSourceFolder(path.join(root, "inside"), rules), path.join(root, "inside"));
    assert.equal(await checkSourceFolder(`${root}/inside/deeper/..`, rules), path.join(root, "inside"));
    fs.symlinkSync(path.join(root, "inside"), path.join(root, "link-inside"));
    try {
      assert.equal(await checkSourceFolder(path.join(root, "link-inside"), rules), path.join(root, "inside"));
    } finally {
      fs.unlinkSync(path.join(root, "link-inside"));
    }
  });

  it("refuses in the same words a folder outside the roots, a '..' leading out, a missing path, a file, links out, the data folder, a dot-folder and a root that is not there", async () => {
    const refused = [
      sibling,
      `${root}/inside/../../${path.basename(sibling)}`,
      `${root}/..`,
      "/",
      path.join(root, "missing"),
      path.join(sibling, "missing"),
      path.join(root, "a-file.txt"),
      path.join(root, "link-out"),
      path.join(root, "link-to-other-root"),
      dataDir,
      path.join(dataDir, "indexes"),
      path.join(root, "link-to-data"),
      path.join(root, ".ssh"),
      path.join(root, "link-to-dot"),
    ];
    for (const requested of refused) assert.equal(await refusalOf(requested), refusal, requested);
    assert.equal(await refusalOf(path.join(root, "inside"), { ...rules, roots: [path.join(root, "not-there")] }), refusal);
    assert.doesNotMatch(refusal, /does not exist|permission|file|link out|outside/i, "nothing in the words tells what is on the disk");
  });

  it("judges the path as written first: a link outside the roots whose real path is inside one is refused all the same", async () => {
    fs.symlinkSync(path.join(root, "inside"), path.join(sibling, "link-in"));
    assert.equal(await refusalOf(path.join(sibling, "link-in")), refusal, "a check of the real path alone would have accepted it");
  });

  it("with FOLDER_SOURCE_DOTFILES=index a dot-folder is a folder like any other, and the data folder is still refused", async () => {
    const indexing: FolderRules = { ...rules, dotfiles: "index" };
    assert.equal(await checkSourceFolder(path.join(root, ".ssh"), indexing), path.join(root, ".ssh"));
    assert.equal(await refusalOf(dataDir, indexing), `path ${folderRefusal(indexing)}`);
    assert.doesNotMatch(folderRefusal(indexing), /dot-folder/);
  });

  it("a second root allows its own folders; a nested root whose own path has a dot-folder allows what is below it", async () => {
    assert.equal(await checkSourceFolder(path.join(other, "docs"), { ...rules, roots: [root, other] }), path.join(other, "docs"));
    fs.mkdirSync(path.join(root, ".ssh", "shared"), { recursive: true });
    assert.equal(await checkSourceFolder(path.join(root, ".ssh", "shared"), { ...rules, roots: [root, path.join(root, ".ssh")] }), path.join(root, ".ssh", "shared"));
  });
});
