import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, openSync, writeSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { ConnectorAuthError, ConnectorEntryError, ConnectorUnreachableError } from "../../server/connectors/connector";
import { SmbConnector, type SmbConnectorOptions } from "../../server/connectors/smb/smb.connector";
import { freePort } from "../fixtures/free-port";
import { SAMBA_TIMEOUT_MS, startSamba, startSilentServer, type SambaServer } from "../fixtures/samba";
import { waitFor } from "../fixtures/wait-for";

const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);
process.on("unhandledRejection", onUnhandled);

const BIG_SIZE = 20 * 1024 * 1024 + 12345;

async function collect(stream: Readable): Promise<{ data: Buffer; chunks: number }> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return { data: Buffer.concat(parts), chunks: parts.length };
}

async function sha256Stream(stream: Readable): Promise<{ hash: string; chunks: number; bytes: number }> {
  const h = createHash("sha256");
  let chunks = 0;
  let bytes = 0;
  for await (const c of stream) {
    h.update(c as Buffer);
    chunks++;
    bytes += (c as Buffer).length;
  }
  return { hash: h.digest("hex"), chunks, bytes };
}

async function waitGone(pids: number[]): Promise<void> {
  const alive = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
    } catch {
      return false;
    }
  };
  await waitFor(() => !pids.some(alive), () => `processes ${pids.filter(alive)} to end`);
}

/** Folders of the `tree` share, each with a file and an empty folder inside. */
const TREE_FOLDERS = 12;

describe("SMB connector against a real Samba", () => {
  let samba: SambaServer;
  let bigDir: string;
  let treeDir: string;
  let bigHash: string;
  const connectors: SmbConnector[] = [];

  /** The lines of smbstatus's open files (share modes) on the fixture's server: an open file or folder handle each. */
  const openOnServer = (): string[] => {
    const out = execFileSync("smbstatus", ["-s", samba.confPath, "-L"], { env: samba.env, encoding: "utf8" });
    return out.split("\n").filter((line) => /^\d+\s/.test(line.trim()));
  };

  const make = (over: Partial<SmbConnectorOptions> = {}) => {
    const c = new SmbConnector({
      host: samba.host,
      port: samba.port,
      serverName: "SLUICETEST",
      username: samba.username,
      password: samba.password,
      workstation: "SLUICE-TEST",
      timeoutMs: SAMBA_TIMEOUT_MS,
      ...over,
    });
    connectors.push(c);
    return c;
  };

  before(async () => {
    bigDir = mkdtempSync(join(tmpdir(), "sluice-smb-big-"));
    // 20 MB of random bytes, written in pieces so the test itself never holds much.
    const h = createHash("sha256");
    const fd = openSync(join(bigDir, "big.bin"), "w");
    for (let left = BIG_SIZE; left > 0; ) {
      const piece = randomBytes(Math.min(left, 1 << 20));
      h.update(piece);
      writeSync(fd, piece);
      left -= piece.length;
    }
    closeSync(fd);
    bigHash = h.digest("hex");
    writeFileSync(join(bigDir, "small.txt"), "small\n");
    writeFileSync(join(bigDir, "empty.txt"), "");
    treeDir = mkdtempSync(join(tmpdir(), "sluice-smb-tree-"));
    for (let i = 0; i < TREE_FOLDERS; i++) {
      mkdirSync(join(treeDir, `folder-${i}`, "inner"), { recursive: true });
      writeFileSync(join(treeDir, `folder-${i}`, "note.txt"), `note ${i}\n`);
    }
    samba = await startSamba({ extraShares: { big: bigDir, tree: treeDir } });
  });

  after(async () => {
    for (const c of connectors) await c.close();
    await samba?.stop();
    rmSync(bigDir, { recursive: true, force: true });
    rmSync(treeDir, { recursive: true, force: true });
    process.off("unhandledRejection", onUnhandled);
  });

  test("authenticates with NTLMv2 against Samba's default auth settings", async () => {
    const conf = readFileSync(samba.confPath, "utf8");
    assert.doesNotMatch(conf, /ntlm auth|min protocol|server signing/i, "the fixture must keep Samba's auth defaults");
    const c = make();
    await c.test();
    assert.equal(c.stats.sessions, 1);
    assert.equal(c.stats.dialect, 0x0311);
    assert.equal(c.stats.spnego, true, "NTLMv2 inside SPNEGO, as the server offers it");
    // Samba does not require signing by default; Sluice signs every 3.x session anyway, so each reply is checked.
    assert.equal(c.stats.signing, true);
    assert.equal(c.stats.signingAlgorithm, 2, "AES-GMAC, the preferred 3.1.1 signing algorithm");
    assert.equal(c.stats.encryptSession, false);
  });

  test("a wrong password is a ConnectorAuthError", async () => {
    await assert.rejects(make({ password: "wrong-password" }).test(), ConnectorAuthError);
    await assert.rejects(make({ username: "nosuchuser" }).list("docs"), ConnectorAuthError);
  });

  test("nothing listening: ConnectorUnreachableError, fast", async () => {
    const port = await freePort();
    const t0 = Date.now();
    await assert.rejects(make({ port }).test(), ConnectorUnreachableError);
    // A refused connection is answered at once, not after the client's timeout (SAMBA_TIMEOUT_MS,
    // 30 s): a third of it tells the two apart however loaded the machine.
    assert.ok(Date.now() - t0 < SAMBA_TIMEOUT_MS / 3, `took ${Date.now() - t0} ms`);
  });

  test("a server that accepts TCP but never answers times out with ConnectorUnreachableError", async () => {
    const silent = await startSilentServer();
    try {
      // Small on purpose: the test is this timeout, against a server that never answers (not Samba).
      const c = make({ port: silent.port, timeoutMs: 1500 });
      const t0 = Date.now();
      await assert.rejects(c.test(), (e: unknown) => {
        assert.ok(e instanceof ConnectorUnreachableError, String(e));
        assert.match(e.message, /1500 ms/);
        return true;
      });
      const took = Date.now() - t0;
      assert.ok(took >= 1400 && took < 2500, `took ${took} ms`);
      // Operations time out too, not only test().
      await assert.rejects(c.list("docs"), ConnectorUnreachableError);
    } finally {
      await silent.close();
    }
  });

  test("share enumeration matches smbclient -L (disk shares only)", async () => {
    const out = execFileSync("smbclient", ["-L", "//127.0.0.1", "-p", String(samba.port), "-U", `${samba.username}%${samba.password}`, "-g"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    const reference = out
      .split("\n")
      .map((l) => l.split("|"))
      .filter((f) => f[0] === "Disk")
      .map((f) => f[1])
      .sort();
    assert.deepEqual(reference, ["big", "docs", "private", "tree"]);
    const c = make();
    const roots = await c.list("");
    assert.deepEqual(roots.map((r) => r.name).sort(), reference);
    assert.ok(roots.every((r) => r.isDirectory && r.path === r.name));
    const all = await c.listShares();
    const ipc = all.find((s) => s.name === "IPC$");
    assert.ok(ipc, "IPC$ is announced");
    assert.equal(ipc.type & 0xff, 3);
    assert.match(ipc.comment, /IPC Service/);
  });

  test("lists the docs share root like the directory on disk", async () => {
    const entries = await make().list("docs");
    const onDisk = readdirSync(samba.shareDir("docs")).sort();
    assert.deepEqual(entries.map((e) => e.name).sort(), onDisk);
    const resume = entries.find((e) => e.name === "résumé ünïcode.txt");
    assert.ok(resume);
    assert.equal(resume.path, "docs/résumé ünïcode.txt");
    assert.equal(resume.isDirectory, false);
    const folder = entries.find((e) => e.name === "folder with spaces");
    assert.equal(folder?.isDirectory, true);
  });

  test("lists nested folders with spaces and unicode in their names", async () => {
    const c = make();
    const deep = await c.list("docs/folder with spaces/sub dir");
    assert.deepEqual(
      deep.map((e) => [e.path, e.isDirectory]),
      [["docs/folder with spaces/sub dir/deep note.txt", false]],
    );
    const uni = await c.list("/docs/projects/ünïcode folder/");
    assert.deepEqual(uni.map((e) => e.path), ["docs/projects/ünïcode folder/naïve.txt"]);
    const projects = await c.list("docs/projects");
    assert.deepEqual(projects.map((e) => e.name).sort(), ["2024", "ünïcode folder"]);
  });

  test("a share the user may not open is an error entry, not a failure", async () => {
    const c = make();
    const listing = await c.shareListing();
    assert.deepEqual(Object.keys(listing).sort(), ["big", "docs", "private", "tree"]);
    assert.deepEqual([...(listing.docs as string[])].sort(), readdirSync(samba.shareDir("docs")).sort());
    assert.deepEqual(listing.private, {
      error: 'Access denied to share "private" for this user',
      reason: "access_denied",
      hint: "This user may not open the share. Ask the server's administrator for access, or use another account.",
    });
    await assert.rejects(c.list("private"), ConnectorEntryError);
    // The other user gets in.
    const other = make({ username: samba.otherUsername, password: samba.otherPassword });
    assert.deepEqual((await other.list("private")).map((e) => e.name), ["secret.txt"]);
  });

  test("single-path problems are ConnectorEntryError", async () => {
    const c = make();
    await assert.rejects(c.list("docs/no such folder"), (e: unknown) => e instanceof ConnectorEntryError && /Not found/.test(e.message));
    await assert.rejects(c.stat("docs/missing.txt"), ConnectorEntryError);
    await assert.rejects(c.read("docs/projects"), ConnectorEntryError);
    await assert.rejects(c.list("docs/readme.txt"), ConnectorEntryError);
    await assert.rejects(c.list("noshare"), (e: unknown) => e instanceof ConnectorEntryError && /No share/.test(e.message));
    await assert.rejects(c.list("docs/../private"), ConnectorEntryError);
    // The connection is still fine afterwards.
    assert.ok((await c.list("docs")).length > 0);
  });

  test("stat sizes and mtimes match the files on disk", async () => {
    const c = make();
    for (const rel of ["readme.txt", "résumé ünïcode.txt", "image.bin", "folder with spaces/sub dir/deep note.txt", "projects/2024/budget.csv"]) {
      const st = await c.stat(`docs/${rel}`);
      const disk = statSync(join(samba.shareDir("docs"), rel));
      assert.equal(st.size, disk.size, rel);
      assert.equal(st.isDirectory, false);
      assert.ok(Math.abs(st.modifiedAt.getTime() - disk.mtimeMs) < 1, `${rel}: ${st.modifiedAt.getTime()} vs ${disk.mtimeMs}`);
      assert.equal(st.path, `docs/${rel}`);
    }
    const dir = await c.stat("docs/projects/2024");
    assert.equal(dir.isDirectory, true);
    assert.equal(dir.name, "2024");
    const listed = (await c.list("docs")).find((e) => e.name === "data.csv");
    assert.equal(listed?.size, statSync(join(samba.shareDir("docs"), "data.csv")).size);
  });

  test("streams a small file equal to its bytes on disk", async () => {
    const c = make();
    for (const rel of ["résumé ünïcode.txt", "image.bin", "config.json"]) {
      const { data } = await collect(await c.read(`docs/${rel}`));
      assert.deepEqual(data, readFileSync(join(samba.shareDir("docs"), rel)), rel);
    }
  });

  test("a file listed as small comes in one round trip: CREATE, READ and CLOSE compounded", async () => {
    const c = make();
    const listed = await c.list("docs");
    for (const rel of ["résumé ünïcode.txt", "image.bin", "config.json"]) {
      const size = listed.find((e) => e.name === rel)!.size;
      const framesBefore = c.stats.framesSent;
      const { data } = await collect(await c.read(`docs/${rel}`, size));
      assert.deepEqual(data, readFileSync(join(samba.shareDir("docs"), rel)), rel);
      assert.equal(c.stats.framesSent - framesBefore, 1, `${rel}: one frame for the whole file`);
    }
    const { data: empty } = await collect(await c.read("big/empty.txt", 0));
    assert.equal(empty.length, 0);
    // The handle was closed in the same chain: the file can be read again at once, and the
    // session is still fine for other work.
    assert.deepEqual((await collect(await c.read("big/small.txt", 6))).data, Buffer.from("small\n"));
    assert.equal((await c.list("big")).length, 3);
  });

  test("each chunk read is a buffer of its own, which the reader may free (Connector.read): compounded or streamed, the bytes are right", async () => {
    const c = make();
    const own = (chunk: Buffer) => chunk.byteOffset === 0 && chunk.length === chunk.buffer.byteLength;
    // Small (a reply in Node's shared pool) and medium (a frame of its own, freed once read), each in one compounded round trip.
    const medium = randomBytes(300 * 1024);
    const mediumPath = join(samba.shareDir("docs"), "medium.bin");
    writeFileSync(mediumPath, medium);
    try {
      for (const [rel, bytes] of [["image.bin", readFileSync(join(samba.shareDir("docs"), "image.bin"))], ["medium.bin", medium]] as const) {
        const compounded: Buffer[] = [];
        for await (const chunk of await c.read(`docs/${rel}`, bytes.length)) compounded.push(chunk as Buffer);
        assert.ok(compounded.every(own), `${rel}: a compounded read's data is a view of its reply's frame`);
        assert.deepEqual(Buffer.concat(compounded), bytes, rel);
      }
    } finally {
      rmSync(mediumPath, { force: true });
    }
    const h = createHash("sha256");
    let chunks = 0;
    for await (const chunk of await c.read("big/big.bin")) {
      assert.ok(own(chunk as Buffer), `chunk ${chunks} is a view of a bigger buffer`);
      h.update(chunk as Buffer);
      chunks++;
    }
    assert.equal(h.digest("hex"), bigHash);
  });

  test("a file that grew since it was listed is still read whole", async () => {
    const c = make();
    const r = await sha256Stream(await c.read("big/big.bin", 10));
    assert.equal(r.bytes, BIG_SIZE);
    assert.equal(r.hash, bigHash);
  });

  test("a compound read of a missing file or a folder fails like a plain read", async () => {
    const c = make();
    await assert.rejects(c.read("docs/no such file.txt", 10), (e: unknown) => e instanceof ConnectorEntryError && /Not found/.test(e.message));
    await assert.rejects(c.read("docs/2024", 10), (e: unknown) => e instanceof ConnectorEntryError);
    await assert.rejects(c.read("docs/2024"), (e: unknown) => e instanceof ConnectorEntryError);
    // A failed chain leaves the connection usable.
    assert.ok((await c.list("docs")).length > 0);
  });

  test("streams a 20 MB file in many chunks, pulled on demand", async () => {
    const c = make();
    const r = await sha256Stream(await c.read("big/big.bin"));
    assert.equal(r.bytes, BIG_SIZE);
    assert.equal(r.hash, bigHash);
    assert.ok(r.chunks >= 20, `only ${r.chunks} chunks`);

    // Backpressure: an unconsumed stream holds about one chunk, not the file.
    const stream = await c.read("big/big.bin");
    await new Promise((resolve) => stream.once("readable", resolve));
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok(stream.readableLength <= 1024 * 1024, `buffered ${stream.readableLength} bytes`);
    stream.destroy();
    await new Promise((resolve) => stream.once("close", resolve));
    assert.ok((await c.list("big")).length === 3, "connection still usable after an abandoned stream");
  });

  test("a listing's CLOSE goes without waiting for its reply, yet a walk of many folders leaves no handle open on the server", async () => {
    const c = make();
    // A file held open (a read stream not yet consumed) shows in smbstatus: the check below can see an open handle.
    const held = await c.read("big/big.bin");
    await waitFor(() => openOnServer().some((line) => line.includes("big.bin")), "the held file in smbstatus");
    const folders = await c.list("tree");
    assert.equal(folders.length, TREE_FOLDERS);
    for (const folder of folders) {
      assert.deepEqual((await c.list(folder.path)).map((e) => e.name).sort(), ["inner", "note.txt"]);
      assert.deepEqual(await c.list(`${folder.path}/inner`), []);
    }
    held.destroy();
    // Every folder's handle is closed by the server while the session is still up (not by a disconnect).
    await waitFor(() => openOnServer().length === 0, () => `no open handles; smbstatus still shows:\n${openOnServer().join("\n")}`);
    assert.equal((await c.list("tree")).length, TREE_FOLDERS, "the session still works");
    await c.close();
  });

  test("close() waits for the CLOSEs still out: a listing followed at once by close() leaves no handle", async () => {
    const c = make();
    for (let i = 0; i < TREE_FOLDERS; i++) await c.list(`tree/folder-${i}`);
    // The last listing answered before its CLOSE's reply could come (that needs a read from the socket).
    assert.ok(c.stats.closesInFlight >= 1, "a CLOSE still out as the listing answers");
    await c.close();
    assert.equal(c.stats.closesInFlight, 0, "close() waited for it");
    await waitFor(() => openOnServer().length === 0, () => `no open handles; smbstatus still shows:\n${openOnServer().join("\n")}`);
  });

  test("re-establishes a dropped connection once, transparently", async () => {
    const c = make();
    await c.list("docs");
    const before = samba.clientPids();
    assert.ok(before.length >= 1, "an smbd child serves us");
    for (const pid of before) process.kill(pid, "SIGKILL");
    await waitGone(before);
    const entries = await c.list("docs/projects");
    assert.equal(entries.length, 2);
    const afterPids = samba.clientPids();
    assert.ok(afterPids.every((p) => !before.includes(p)));
    assert.equal(c.stats.sessions, 2, "exactly one reconnect");
  });

  test("when the reconnect fails too, the error is typed and prompt", async () => {
    const gone = await startSamba();
    const c = new SmbConnector({
      host: gone.host,
      port: gone.port,
      serverName: "SLUICETEST",
      username: gone.username,
      password: gone.password,
      timeoutMs: SAMBA_TIMEOUT_MS,
    });
    try {
      assert.ok((await c.list("docs")).length > 0);
      await gone.stop(); // drops our connection and nothing listens any more
      const t0 = Date.now();
      await assert.rejects(c.list("docs"), ConnectorUnreachableError);
      // Prompt: the refused reconnect is not waited out as a timeout (a bound a loaded machine cannot trip).
      assert.ok(Date.now() - t0 < SAMBA_TIMEOUT_MS, `took ${Date.now() - t0} ms`);
      assert.equal(c.stats.sessions, 1);
    } finally {
      await c.close();
      await gone.stop();
    }
  });

  test("a dropped connection mid-stream resumes at the same offset", async () => {
    const c = make();
    const stream = await c.read("big/big.bin");
    const h = createHash("sha256");
    let bytes = 0;
    let killed = false;
    for await (const chunk of stream) {
      h.update(chunk as Buffer);
      bytes += (chunk as Buffer).length;
      if (!killed && bytes > 3 * 1024 * 1024) {
        killed = true;
        const pids = samba.clientPids();
        for (const pid of pids) process.kill(pid, "SIGKILL");
        await waitGone(pids);
      }
    }
    assert.ok(killed);
    assert.equal(c.stats.sessions, 2);
    assert.equal(bytes, BIG_SIZE);
    assert.equal(h.digest("hex"), bigHash);
  });

  test("signs requests when the server requires signing", async () => {
    const signed = await startSamba({ globalOptions: { "server signing": "mandatory" } });
    try {
      const c = new SmbConnector({
        host: signed.host,
        port: signed.port,
        serverName: "SLUICETEST",
        username: signed.username,
        password: signed.password,
        timeoutMs: SAMBA_TIMEOUT_MS,
      });
      try {
        assert.deepEqual((await c.list("")).map((e) => e.name).sort(), ["docs", "private"]);
        assert.equal(c.stats.signing, true);
        const { data } = await collect(await c.read("docs/notes.md"));
        const onDisk = readFileSync(join(signed.shareDir("docs"), "notes.md"));
        assert.deepEqual(data, onDisk);
        // Each message of a compound chain is signed on its own; the server checks them all.
        assert.deepEqual((await collect(await c.read("docs/notes.md", onDisk.length))).data, onDisk);
      } finally {
        await c.close();
      }
    } finally {
      await signed.stop();
    }
  });

  test("a guest session granted for bad credentials counts as an auth failure", async () => {
    const lax = await startSamba({ globalOptions: { "map to guest": "bad user" } });
    try {
      const c = new SmbConnector({
        host: lax.host,
        port: lax.port,
        serverName: "SLUICETEST",
        username: "nosuchuser",
        password: "whatever",
        timeoutMs: SAMBA_TIMEOUT_MS,
      });
      try {
        await assert.rejects(c.test(), ConnectorAuthError);
      } finally {
        await c.close();
      }
    } finally {
      await lax.stop();
    }
  });

  test("waits through STATUS_PENDING interim responses", async () => {
    // A fresh smbd starts its RPC daemon (samba-dcerpcd) on the first pipe open and
    // answers the srvsvc call with STATUS_PENDING first.
    const fresh = await startSamba();
    try {
      const c = new SmbConnector({
        host: fresh.host,
        port: fresh.port,
        serverName: "SLUICETEST",
        username: fresh.username,
        password: fresh.password,
        timeoutMs: SAMBA_TIMEOUT_MS,
      });
      try {
        const shares = await c.listShares();
        assert.ok(shares.some((s) => s.name === "docs"));
        assert.ok(c.stats.interimResponses >= 1, `interim responses: ${c.stats.interimResponses}`);
      } finally {
        await c.close();
      }
    } finally {
      await fresh.stop();
    }
  });

  test("no unhandled rejections along the way", async () => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(unhandled, []);
  });
});
