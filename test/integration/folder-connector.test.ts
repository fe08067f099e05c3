import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { after, describe, it } from "node:test";
import { ConnectorEntryError, ConnectorUnreachableError, type RemoteEntry } from "../../server/connectors/connector";
import { IS_LINK, NOT_REGULAR, REPLACED } from "../../server/connectors/folder/folder-open";
import { FolderConnector, type FolderConnectorHooks } from "../../server/connectors/folder/folder.connector";
import { type FolderRules, folderRefusal } from "../../server/connectors/folder/folder-rules";
import { tempDir } from "../fixtures/sluice-server";
import { within } from "../fixtures/wait-for";

// The folder connector on real files: a source folder inside one root, a second root, a folder
// outside both, Sluice's data folder under the source folder, dot-entries, a FIFO and links to
// each of them and to /dev/zero. Swaps between the walk and the open happen in the connector's
// beforeOpen hook, so each lands exactly in the window it aims at.
const root = fs.realpathSync(tempDir("sluice-fc-root-"));
const otherRoot = fs.realpathSync(tempDir("sluice-fc-other-"));
const outside = fs.realpathSync(tempDir("sluice-fc-outside-"));
const source = path.join(root, "source");
const dataDir = path.join(source, "sluice-data");
const rules: FolderRules = { roots: [root, otherRoot], dataDir, dotfiles: "skip" };
after(() => {
  for (const dir of [root, otherRoot, outside]) fs.rmSync(dir, { recursive: true, force: true });
});

function write(file: string, text: string) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

function mkfifo(file: string) {
  const made = spawnSync("mkfifo", [file]);
  assert.equal(made.status, 0, `mkfifo ${file}: ${made.stderr}`);
}

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Every file and folder of the source, as ingestion walks it. */
async function walk(connector: FolderConnector, folder = ""): Promise<RemoteEntry[]> {
  const found: RemoteEntry[] = [];
  for (const entry of await connector.list(folder)) {
    found.push(entry);
    if (entry.isDirectory) found.push(...(await walk(connector, entry.path)));
  }
  return found;
}

/** The message a refused read answers with (it must be a ConnectorEntryError, a failed file, not a failed job). */
async function refusedRead(connector: FolderConnector, relPath: string): Promise<string> {
  try {
    await text(await within(connector.read(relPath), `the read of ${relPath} to answer (a FIFO or device must not hang it)`));
  } catch (error) {
    assert.ok(error instanceof ConnectorEntryError, `${relPath}: ${String(error)}`);
    assert.equal(error.path, relPath);
    return error.message;
  }
  assert.fail(`${relPath} was read`);
}

write(path.join(source, "notes.txt"), "aardvark notes");
write(path.join(source, "sub", "deep.txt"), "platypus memo");
write(path.join(source, "swap-me.txt"), "the walked file");
write(path.join(source, "to-link.txt"), "will become a link");
write(path.join(source, "to-fifo.txt"), "will become a FIFO");
write(path.join(source, "parent", "inner.txt"), "inside the source");
write(path.join(outside, "parent", "inner.txt"), "outside: must never be read");
write(path.join(outside, "secret.txt"), "walrus secret from outside");
write(path.join(otherRoot, "shared.txt"), "a file of the other root");
write(path.join(root, "elsewhere.txt"), "same root, outside the source folder");
write(path.join(source, ".env"), "API_KEY=not-for-indexing");
write(path.join(source, ".git", "config"), "[core] dot-folder");
write(path.join(source, "sub", ".hidden.txt"), "a dot-file deeper down");
write(path.join(dataDir, "sluice-secret.txt"), "the data folder's own file");
fs.symlinkSync(path.join(outside, "secret.txt"), path.join(source, "link-out.txt"));
fs.symlinkSync(path.join(otherRoot, "shared.txt"), path.join(source, "link-other-root.txt"));
fs.symlinkSync(path.join(root, "elsewhere.txt"), path.join(source, "link-same-root.txt"));
fs.symlinkSync(path.join(source, "notes.txt"), path.join(source, "link-inner.txt"));
fs.symlinkSync("/dev/zero", path.join(source, "zero"));
fs.symlinkSync(dataDir, path.join(source, "link-to-data"));
mkfifo(path.join(source, "fifo"));

describe("the folder connector on real files", () => {
  it("walks files and folders, leaves out dot-entries, the data folder, a FIFO and links inside; lists links out (to another root, elsewhere in the same root, /dev/zero) as refused", async () => {
    const connector = new FolderConnector(source, rules);
    const found = await walk(connector);
    const byPath = new Map(found.map((e) => [e.path, e]));
    assert.deepEqual(
      found.filter((e) => !e.refused).map((e) => e.path).sort(),
      ["notes.txt", "parent", "parent/inner.txt", "sub", "sub/deep.txt", "swap-me.txt", "to-fifo.txt", "to-link.txt"],
    );
    for (const link of ["link-out.txt", "link-other-root.txt", "link-same-root.txt", "zero"]) {
      assert.match(byPath.get(link)?.refused ?? "", /link leading out of the source folder/, link);
    }
    for (const left of [".env", ".git", ".git/config", "sub/.hidden.txt", "sluice-data", "sluice-data/sluice-secret.txt", "fifo", "link-inner.txt", "link-to-data"]) {
      assert.equal(byPath.has(left), false, `${left} is not walked`);
    }
    assert.equal(await text(await connector.read("notes.txt")), "aardvark notes");
    assert.equal(await text(await connector.read("sub/deep.txt")), "platypus memo");
  });

  it("refuses a direct read of a FIFO (without hanging), a link to /dev/zero, a dot-entry and a file in the data folder, each as a failed file", async () => {
    const connector = new FolderConnector(source, rules);
    assert.match(await refusedRead(connector, "fifo"), new RegExp(NOT_REGULAR.replace(/[()]/g, "\\$&")));
    assert.match(await refusedRead(connector, "zero"), /link leading out/);
    assert.match(await refusedRead(connector, ".env"), /dot-entry/);
    assert.match(await refusedRead(connector, "sub/.hidden.txt"), /dot-entry/);
    assert.match(await refusedRead(connector, "sluice-data/sluice-secret.txt"), /Sluice's own data folder/);
    await assert.rejects(connector.list(".git"), (error: unknown) => error instanceof ConnectorEntryError && /dot-entry/.test(error.message));
    await assert.rejects(connector.list("sluice-data"), (error: unknown) => error instanceof ConnectorEntryError && /data folder/.test(error.message));
  });

  it("a file replaced after the walk (a new file under its name) is a failed file saying so, and is read on the next walk", async () => {
    const connector = new FolderConnector(source, rules);
    await walk(connector);
    const replacement = path.join(source, "swap-me.new");
    fs.writeFileSync(replacement, "a different file");
    fs.renameSync(replacement, path.join(source, "swap-me.txt"));
    assert.match(await refusedRead(connector, "swap-me.txt"), new RegExp(REPLACED.replace(/[()]/g, "\\$&")));
    const next = new FolderConnector(source, rules);
    await walk(next);
    assert.equal(await text(await next.read("swap-me.txt")), "a different file");
  });

  it("a file swapped for a link to /dev/zero, or for a FIFO, between its checks and its open is refused and nothing hangs", async () => {
    const swaps: Record<string, () => void> = {
      "to-link.txt": () => {
        fs.rmSync(path.join(source, "to-link.txt"));
        fs.symlinkSync("/dev/zero", path.join(source, "to-link.txt"));
      },
      "to-fifo.txt": () => {
        fs.rmSync(path.join(source, "to-fifo.txt"));
        mkfifo(path.join(source, "to-fifo.txt"));
      },
    };
    const swapped: string[] = [];
    const hooks: FolderConnectorHooks = {
      beforeOpen: async (relPath) => {
        swaps[relPath]?.();
        swapped.push(relPath);
      },
    };
    const connector = new FolderConnector(source, rules, hooks);
    await walk(connector);
    assert.equal(await refusedRead(connector, "to-link.txt"), `to-link.txt ${IS_LINK}`);
    assert.match(await refusedRead(connector, "to-fifo.txt"), /is not a regular file/);
    assert.deepEqual(swapped, ["to-link.txt", "to-fifo.txt"], "each swap happened in the window between the checks and the open");
  });

  it("a parent folder swapped for a link leading out between the checks and the open is refused: the file opened is not the walked one", async () => {
    const parent = path.join(source, "parent");
    const hooks: FolderConnectorHooks = {
      beforeOpen: async (relPath) => {
        if (relPath !== "parent/inner.txt") return;
        fs.renameSync(parent, path.join(source, "parent-was"));
        fs.symlinkSync(path.join(outside, "parent"), parent);
      },
    };
    const connector = new FolderConnector(source, rules, hooks);
    await walk(connector);
    try {
      assert.match(await refusedRead(connector, "parent/inner.txt"), new RegExp(REPLACED.replace(/[()]/g, "\\$&")));
    } finally {
      fs.unlinkSync(parent);
      fs.renameSync(path.join(source, "parent-was"), parent);
    }
  });

  it("with FOLDER_SOURCE_DOTFILES=index, dot-entries are walked and read; the data folder still is not", async () => {
    const connector = new FolderConnector(source, { ...rules, dotfiles: "index" });
    const paths = (await walk(connector)).filter((e) => !e.refused).map((e) => e.path);
    for (const dot of [".env", ".git", ".git/config", "sub/.hidden.txt"]) assert.ok(paths.includes(dot), `${dot} is walked`);
    assert.equal(await text(await connector.read(".git/config")), "[core] dot-folder");
    assert.equal(paths.some((p) => p.startsWith("sluice-data")), false);
  });

  it("the source folder itself is re-checked: one swapped for a link leading out fails the job with the generic words", async () => {
    const moving = path.join(root, "moving");
    fs.mkdirSync(moving);
    const connector = new FolderConnector(moving, rules);
    await connector.test();
    fs.rmdirSync(moving);
    fs.symlinkSync(outside, moving);
    const again = new FolderConnector(moving, rules);
    await assert.rejects(again.test(), (error: unknown) => error instanceof ConnectorUnreachableError && error.message === `The source's folder ${folderRefusal(rules)}`);
  });
});
