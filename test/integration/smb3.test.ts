import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { ConnectorAuthError } from "../../server/connectors/connector";
import { SmbConnector, type SmbConnectorOptions } from "../../server/connectors/smb/smb.connector";
import { SmbEncryptionRequiredError, SmbSecurityError } from "../../server/connectors/smb/smb-errors";
import { addSmbSource, client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { SAMBA_TIMEOUT_MS, startSamba, type SambaServer, type StartSambaOptions } from "../fixtures/samba";
import { startSluice, type SluiceServer } from "../fixtures/sluice-server";

/**
 * SMB 3 against Samba set up the ways organisations harden their file servers: for each set-up,
 * the connector (dialect, signing, encryption, listing, reads), smbclient as the reference on the
 * same server, and the API end to end (source creation, share listing, ingestion, search).
 */

const GCM = 2;
const CCM = 1;
const GMAC = 2;
const CMAC = 1;
const HMAC = 0;

interface Setup {
  name: string;
  samba: StartSambaOptions;
  /** smbclient's protocol and encryption flags for this server. */
  smbclient: string[];
  dialect: number;
  signingAlgorithm: number;
  /** The cipher the session can use, 0 for none. */
  cipher: number;
  encryptSession: boolean;
  /** User names as typed, and how smbclient logs in for each. */
  users?: Array<{ typed: string; smbclient: string[] }>;
}

/** A share whose own settings require encryption (the per-share set-up adds it to every server; only there it is encrypted). */
const VAULT_PHRASE = "obsidian lighthouse ledger";

const setups: Setup[] = [
  { name: "Samba defaults", samba: {}, smbclient: ["-m", "SMB3"], dialect: 0x0311, signingAlgorithm: GMAC, cipher: GCM, encryptSession: false },
  {
    name: "SMB3_11 minimum and mandatory signing",
    samba: { globalOptions: { "server min protocol": "SMB3_11", "server signing": "mandatory" } },
    smbclient: ["-m", "SMB3"],
    dialect: 0x0311,
    signingAlgorithm: GMAC,
    cipher: GCM,
    encryptSession: false,
  },
  {
    name: "encryption required for every session",
    samba: { globalOptions: { "server smb encrypt": "required" } },
    smbclient: ["-m", "SMB3", "--client-protection=encrypt"],
    dialect: 0x0311,
    signingAlgorithm: GMAC,
    cipher: GCM,
    encryptSession: true,
  },
  {
    name: "encryption required on one share only",
    samba: { shareOptions: { vault: { "smb encrypt": "required" } } },
    smbclient: ["-m", "SMB3", "--client-protection=encrypt"],
    dialect: 0x0311,
    signingAlgorithm: GMAC,
    cipher: GCM,
    encryptSession: false,
  },
  {
    name: "SMB 3.0.2 maximum with encryption required (AES-CMAC signing, AES-128-CCM)",
    samba: { globalOptions: { "server max protocol": "SMB3_02", "server smb encrypt": "required" } },
    smbclient: ["-m", "SMB3", "--client-protection=encrypt"],
    dialect: 0x0302,
    signingAlgorithm: CMAC,
    cipher: CCM,
    encryptSession: true,
  },
  {
    name: "SMB 2.1 maximum (an old NAS)",
    samba: { globalOptions: { "server max protocol": "SMB2_10" } },
    smbclient: ["-m", "SMB2"],
    dialect: 0x0210,
    signingAlgorithm: HMAC,
    cipher: 0,
    encryptSession: false,
  },
  {
    name: "SMB 2.1 maximum with mandatory signing (HMAC-SHA256)",
    samba: { globalOptions: { "server max protocol": "SMB2_10", "server signing": "mandatory" } },
    smbclient: ["-m", "SMB2"],
    dialect: 0x0210,
    signingAlgorithm: HMAC,
    cipher: 0,
    encryptSession: false,
  },
  {
    name: "user names typed as WORKGROUP\\user and user@WORKGROUP (username map)",
    samba: { usernameMap: { sluice: ["sluice@WORKGROUP"] }, globalOptions: { "server signing": "mandatory" } },
    smbclient: ["-m", "SMB3"],
    dialect: 0x0311,
    signingAlgorithm: GMAC,
    cipher: GCM,
    encryptSession: false,
    users: [
      { typed: "WORKGROUP\\sluice", smbclient: ["-W", "WORKGROUP", "-U", "sluice"] },
      { typed: "sluice@WORKGROUP", smbclient: ["-W", "WORKGROUP", "-U", "sluice"] },
    ],
  },
];

let server: SluiceServer;
let request: Request;
let owner: { token: string };
let group: string;
const bigFile = randomBytes(3 * 1024 * 1024 + 777);

before(async () => {
  server = await startSluice({ env: { SMB_TIMEOUT_MS: String(SAMBA_TIMEOUT_MS) } });
  request = client(server.api);
  owner = await signUp(request, "smb3");
  group = await createGroup(request, owner.token, "smb3");
});
after(async () => {
  await server?.stop();
});

async function collect(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

function smbclient(samba: SambaServer, args: string[], user: string[], share: string, command: string): string {
  return execFileSync("smbclient", [`//127.0.0.1/${share}`, "-p", String(samba.port), ...user, `--password=${samba.password}`, ...args, "-c", command], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function smbclientShares(samba: SambaServer, args: string[]): string[] {
  const out = execFileSync("smbclient", ["-L", "//127.0.0.1", "-p", String(samba.port), "-U", `${samba.username}%${samba.password}`, "-g", ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  return out
    .split("\n")
    .filter((l) => l.startsWith("Disk|"))
    .map((l) => l.split("|")[1])
    .sort();
}

async function search(collectionId: string, q: string) {
  const res = await request("GET", `/collections/${collectionId}/search?q=${encodeURIComponent(q)}`, { token: owner.token });
  assert.equal(res.status, 200, res.text);
  return res.body.results as Array<{ path: string }>;
}

for (const setup of setups) {
  describe(setup.name, () => {
    let samba: SambaServer;
    let vaultDir: string;
    const connectors: SmbConnector[] = [];
    const users = setup.users ?? [{ typed: "", smbclient: [] }];
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
      vaultDir = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-vault-"));
      fs.chmodSync(vaultDir, 0o755);
      fs.writeFileSync(path.join(vaultDir, "minutes.txt"), `Board minutes: the ${VAULT_PHRASE} was approved.\n`);
      fs.writeFileSync(path.join(vaultDir, "big.bin"), bigFile);
      samba = await startSamba({ ...setup.samba, extraShares: { vault: vaultDir } });
    });
    after(async () => {
      for (const c of connectors) await c.close();
      await samba?.stop();
      fs.rmSync(vaultDir, { recursive: true, force: true });
    });

    for (const user of users) {
      const who = user.typed ? ` as ${user.typed}` : "";
      const username = () => user.typed || samba.username;
      const smbclientUser = () => (user.typed ? user.smbclient : ["-U", samba.username]);

      it(`connector${who}: dialect, signing and encryption as the server demands; shares like smbclient -L`, async () => {
        const c = make({ username: username() });
        await c.test();
        assert.equal(c.stats.dialect, setup.dialect, `dialect 0x${c.stats.dialect.toString(16)}`);
        assert.equal(c.stats.spnego, true);
        const mustSign = setup.dialect >= 0x0300 || /mandatory/.test(JSON.stringify(setup.samba));
        assert.equal(c.stats.signing, mustSign);
        if (mustSign) assert.equal(c.stats.signingAlgorithm, setup.signingAlgorithm);
        assert.equal(c.stats.cipher, setup.cipher);
        assert.equal(c.stats.encryptSession, setup.encryptSession);
        const shares = (await c.list("")).map((e) => e.name).sort();
        assert.deepEqual(shares, smbclientShares(samba, setup.smbclient));
        assert.deepEqual(shares, ["docs", "private", "vault"]);
      });

      it(`connector${who}: reads equal the bytes on disk and what smbclient reads; compound reads stay one frame`, async () => {
        const c = make({ username: username() });
        const listed = await c.list("vault");
        const minutes = listed.find((e) => e.name === "minutes.txt")!;
        const frames = c.stats.framesSent;
        const small = await collect(await c.read("vault/minutes.txt", minutes.size));
        assert.equal(c.stats.framesSent - frames, 1, "CREATE + READ + CLOSE in one frame (one TRANSFORM_HEADER when encrypted)");
        assert.deepEqual(small, fs.readFileSync(path.join(vaultDir, "minutes.txt")));
        const big = await collect(await c.read("vault/big.bin"));
        assert.ok(big.equals(bigFile), "a file streamed in many reads");
        const resume = await collect(await c.read("docs/résumé ünïcode.txt"));
        assert.deepEqual(resume, fs.readFileSync(path.join(samba.shareDir("docs"), "résumé ünïcode.txt")));

        const target = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-smbclient-"));
        try {
          smbclient(samba, setup.smbclient, smbclientUser(), "vault", `lcd ${target}; get minutes.txt; get big.bin`);
          assert.deepEqual(fs.readFileSync(path.join(target, "minutes.txt")), small);
          assert.ok(fs.readFileSync(path.join(target, "big.bin")).equals(big));
        } finally {
          fs.rmSync(target, { recursive: true, force: true });
        }
      });
    }

    it("a wrong password is a logon failure, whatever the security set-up", async () => {
      await assert.rejects(make({ username: users[0].typed || samba.username, password: "wrong" }).test(), ConnectorAuthError);
    });

    it("API: source creation and share listing (each user name form), a full ingestion and search", async () => {
      let created: Awaited<ReturnType<typeof addSmbSource>> | undefined;
      for (const user of users) {
        const username = user.typed || samba.username;
        created = await addSmbSource(request, owner.token, group, { username, password: samba.password, port: samba.port }, `SMB3 ${setup.name} ${username}`);
        const listing = await request("GET", `/data_sources/smb/list/${created.data_source.id}`, { token: owner.token });
        assert.equal(listing.status, 200, listing.text);
        assert.deepEqual(Object.keys(listing.body.shares).sort(), smbclientShares(samba, setup.smbclient));
        assert.deepEqual([...listing.body.shares.vault].sort(), ["big.bin", "minutes.txt"]);
        assert.equal(typeof listing.body.shares.private.error, "string");
      }
      if (!created) throw new Error("no source");

      const trigger = await request("POST", `/data_pipelines/${created.pipeline.id}/ingest`, { token: owner.token });
      assert.equal(trigger.status, 202, trigger.text);
      const job = await waitForJobEnd(request, owner.token, created.pipeline.id);
      assert.equal(job.status, "completed", JSON.stringify(job));
      assert.equal((await search(created.pipeline.collection_id, VAULT_PHRASE))[0]?.path, "vault/minutes.txt");
      assert.equal((await search(created.pipeline.collection_id, "two levels down"))[0]?.path, "docs/folder with spaces/sub dir/deep note.txt");
    });
  });
}

describe("a server that requires encryption it cannot get", () => {
  it("a server limited to SMB 2.1 that requires encryption: a typed encryption_required error, and 400 at source creation", async () => {
    const samba = await startSamba({ globalOptions: { "server max protocol": "SMB2_10", "server smb encrypt": "required" } });
    const c = new SmbConnector({ host: samba.host, port: samba.port, serverName: "SLUICETEST", username: samba.username, password: samba.password, timeoutMs: SAMBA_TIMEOUT_MS });
    try {
      for (const attempt of [() => c.test(), () => c.list("docs")]) {
        await assert.rejects(attempt(), (e: unknown) => {
          assert.ok(e instanceof SmbEncryptionRequiredError, String(e));
          assert.ok(e instanceof SmbSecurityError);
          assert.equal(e.reason, "encryption_required");
          assert.match(e.message, /requires encryption.*SMB 3.*2\.1/);
          return true;
        });
      }
      const res = await request("POST", `/data_sources/smb/${group}`, {
        token: owner.token,
        body: {
          data_source: { data_source_name: "Needs encryption" },
          smb_source: { remote_system_username: samba.username, remote_smb_password: samba.password, remote_system_name: "localhost", local_system_name: "SLUICE", default_ip: "127.0.0.1", port: samba.port },
        },
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.detail, "Invalid SMB credentials");
      assert.equal(res.body.reason, "encryption_required");
      assert.match(res.body.hint, /requires encryption/);
    } finally {
      await c.close();
      await samba.stop();
    }
  });
});
