import assert from "node:assert/strict";
import type { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { SmbConnector } from "../../server/connectors/smb/smb.connector";
import { SmbBadSignatureError, SmbSigningRequiredError } from "../../server/connectors/smb/smb-errors";
import { addSmbSource, client, createGroup, signUp, waitForJobEnd } from "../fixtures/http-client";
import { SAMBA_TIMEOUT_MS, startSamba, type SambaServer, type StartSambaOptions } from "../fixtures/samba";
import { startSluice } from "../fixtures/sluice-server";
import { startSmbProxy, type SmbProxy } from "../fixtures/smb-proxy";

/**
 * A machine in the middle (a proxy in the test) changes the server's replies: a signed or
 * encrypted session must reject them, with a typed error, and use nothing from them.
 */

const READ = 0x8;
const QUERY_DIRECTORY = 0xe;
const NEGOTIATE = 0x0;

/** The plain SMB2 messages of a reply frame (none for an encrypted one). */
function messagesOf(frame: Buffer): Buffer[] {
  const out: Buffer[] = [];
  if (frame.readUInt32BE(0) !== 0xfe534d42) return out;
  for (let off = 0; ; ) {
    const next = frame.readUInt32LE(off + 20);
    out.push(frame.subarray(off, next ? off + next : frame.length));
    if (!next) return out;
    off += next;
  }
}

const isReply = (m: Buffer, command: number) => m.readUInt16LE(12) === command && m.readUInt32LE(8) === 0;

async function collect(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

function withProxy(name: string, options: StartSambaOptions, body: (ctx: { samba: () => SambaServer; proxy: () => SmbProxy; make: () => SmbConnector }) => void) {
  describe(name, () => {
    let samba: SambaServer;
    let proxy: SmbProxy;
    const connectors: SmbConnector[] = [];
    before(async () => {
      samba = await startSamba(options);
      proxy = await startSmbProxy(samba);
    });
    after(async () => {
      for (const c of connectors) await c.close();
      await proxy?.close();
      await samba?.stop();
    });
    const make = () => {
      proxy.tamper = undefined;
      const c = new SmbConnector({
        host: "127.0.0.1",
        port: proxy.port,
        serverName: "SLUICETEST",
        username: samba.username,
        password: samba.password,
        timeoutMs: SAMBA_TIMEOUT_MS,
      });
      connectors.push(c);
      return c;
    };
    body({ samba: () => samba, proxy: () => proxy, make });
  });
}

/** Flips the last byte of every successful READ reply (the file's data). */
const flipReadData = (frame: Buffer) => {
  for (const m of messagesOf(frame)) if (isReply(m, READ)) m[m.length - 1] ^= 0x20;
};

for (const [name, options, dialect] of [
  ["SMB 3.1.1, signed with AES-GMAC (Samba defaults)", {}, 0x0311],
  ["SMB 3.0.2, signed with AES-CMAC", { globalOptions: { "server max protocol": "SMB3_02" } }, 0x0302],
  ["SMB 2.1, signing mandatory (HMAC-SHA256)", { globalOptions: { "server max protocol": "SMB2_10", "server signing": "mandatory" } }, 0x0210],
] as const) {
  withProxy(name, options, ({ samba, proxy, make }) => {
    it("a READ reply with changed data fails the read with SmbBadSignatureError; nothing of it is delivered", async () => {
      const c = make();
      await c.test();
      assert.equal(c.stats.dialect, dialect);
      assert.equal(c.stats.signing, true);
      proxy().tamper = flipReadData;
      const stream = await c.read("docs/readme.txt");
      const got: Buffer[] = [];
      await assert.rejects(
        (async () => {
          for await (const chunk of stream) got.push(chunk as Buffer);
        })(),
        (e: unknown) => e instanceof SmbBadSignatureError && e.reason === "bad_signature" && /signature verification/.test(e.message),
      );
      assert.deepEqual(got, [], "no byte of the tampered reply reached the reader");
      // The session is fine once the tampering stops.
      proxy().tamper = undefined;
      assert.equal((await collect(await c.read("docs/readme.txt"))).toString(), "Sluice test share.\nPlain text file.\n");
      void samba;
    });

    it("a compound reply (CREATE + READ + CLOSE) with changed data is rejected too", async () => {
      const c = make();
      const size = (await c.list("docs")).find((e) => e.name === "notes.md")!.size;
      proxy().tamper = flipReadData;
      await assert.rejects(c.read("docs/notes.md", size), SmbBadSignatureError);
    });

    it("a directory listing whose signature was stripped is rejected", async () => {
      const c = make();
      await c.test();
      proxy().tamper = (frame) => {
        for (const m of messagesOf(frame)) {
          if (!isReply(m, QUERY_DIRECTORY)) continue;
          m.writeUInt32LE(m.readUInt32LE(16) & ~0x8, 16);
          m.fill(0, 48, 64);
        }
      };
      await assert.rejects(c.list("docs"), (e: unknown) => e instanceof SmbBadSignatureError && /unsigned/.test(e.message));
    });
  });
}

withProxy("SMB 3.1.1 preauth integrity", {}, ({ proxy, make }) => {
  it("a changed NEGOTIATE reply makes the login fail: the final SESSION_SETUP signature does not verify", async () => {
    const c = make();
    proxy().tamper = (frame) => {
      // ServerGuid, a field nothing else checks: only the preauth hash notices.
      for (const m of messagesOf(frame)) if (m.readUInt16LE(12) === NEGOTIATE) m[64 + 8] ^= 0xff;
    };
    await assert.rejects(c.test(), (e: unknown) => e instanceof SmbBadSignatureError && /login/.test(e.message));
  });
});

withProxy("SMB 3.1.1 signing algorithm", {}, ({ proxy, make }) => {
  it("a server choosing a signing algorithm Sluice did not offer: SmbSigningRequiredError", async () => {
    const c = make();
    proxy().tamper = (frame) => {
      for (const m of messagesOf(frame)) {
        if (m.readUInt16LE(12) !== NEGOTIATE) continue;
        let off = m.readUInt32LE(64 + 60);
        for (let i = 0; i < m.readUInt16LE(64 + 6); i++) {
          const len = m.readUInt16LE(off + 2);
          if (m.readUInt16LE(off) === 0x8) m.writeUInt16LE(0x7, off + 8 + 2);
          off = (off + 8 + len + 7) & ~7;
        }
      }
    };
    await assert.rejects(c.test(), (e: unknown) => e instanceof SmbSigningRequiredError && e.reason === "signing_required");
  });
});

withProxy("a server that offers no SPNEGO (SMB 2.1)", { globalOptions: { "server max protocol": "SMB2_10" } }, ({ proxy, make }) => {
  it("logs in with raw NTLMSSP when the NEGOTIATE response has no security buffer", async () => {
    const c = make();
    proxy().tamper = (frame) => {
      for (const m of messagesOf(frame)) if (m.readUInt16LE(12) === NEGOTIATE) m.writeUInt16LE(0, 64 + 58);
    };
    assert.ok((await c.list("docs")).some((e) => e.name === "readme.txt"));
    assert.equal(c.stats.spnego, false);
    assert.equal(c.stats.dialect, 0x0210);
  });
});

withProxy("SMB 3.1.1, encryption required (AES-128-GCM)", { globalOptions: { "server smb encrypt": "required" } }, ({ proxy, make }) => {
  it("a changed encrypted reply fails with SmbBadSignatureError; the next operation reconnects", async () => {
    const c = make();
    await c.test();
    assert.equal(c.stats.encryptSession, true);
    let armed = true;
    proxy().tamper = (frame) => {
      if (armed && frame.readUInt32BE(0) === 0xfd534d42) {
        armed = false;
        frame[frame.length - 1] ^= 0x01;
      }
    };
    await assert.rejects(c.list("docs"), (e: unknown) => e instanceof SmbBadSignatureError && /authentication/.test(e.message));
    assert.ok((await c.list("docs")).some((e) => e.name === "readme.txt"));
    assert.equal(c.stats.sessions, 2);
  });

});

describe("through the API: a tampered file is never indexed", () => {
  it("ingestion through a machine in the middle that rewrites file contents indexes none of its text", async () => {
    const samba = await startSamba();
    const proxy = await startSmbProxy(samba);
    const server = await startSluice({ env: { SMB_TIMEOUT_MS: String(SAMBA_TIMEOUT_MS) } });
    try {
      const request = client(server.api);
      const user = await signUp(request, "tamper");
      const group = await createGroup(request, user.token, "tamper");
      const source = await addSmbSource(request, user.token, group, { username: samba.username, password: samba.password, port: proxy.port }, "Tampered");
      const original = Buffer.from("Plain text file");
      proxy.tamper = (frame) => {
        for (const m of messagesOf(frame)) {
          const at = m.indexOf(original);
          if (at >= 0) Buffer.from("Forged evidence").copy(m, at);
        }
      };
      const trigger = await request("POST", `/data_pipelines/${source.pipeline.id}/ingest`, { token: user.token });
      assert.equal(trigger.status, 202);
      const job = await waitForJobEnd(request, user.token, source.pipeline.id);
      assert.notEqual(job.status, "processing");
      const found = await request("GET", `/collections/${source.pipeline.collection_id}/search?q=${encodeURIComponent("forged evidence")}`, { token: user.token });
      assert.equal(found.status, 200);
      assert.deepEqual(found.body.results, [], "the forged text was not indexed");
      assert.ok(job.status === "failed" || (job.errors ?? []).some((e: { entity: string }) => e.entity === "docs/readme.txt"), JSON.stringify(job));
      assert.match(JSON.stringify(job), /signature/);
    } finally {
      await server.stop();
      await proxy.close();
      await samba.stop();
    }
  });
});
