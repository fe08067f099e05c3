// The SMB client against a hostile server (test/fixtures/hostile-smb.ts): every loop and wait the
// server drives ends, each with an error that says which bound it met (issue 34).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { LISTING_LIMITS, Smb2Client } from "../../server/connectors/smb/smb2-client";
import { DEFAULT_MAX_PIPE_READS } from "../../server/connectors/smb/dcerpc";
import { REQUEST_DEADLINE_TIMEOUTS } from "../../server/connectors/smb/smb2-connection";
import { SmbConnector } from "../../server/connectors/smb/smb.connector";
import { HOSTILE_FILE, HOSTILE_SHARE, startHostileSmb, type HostileSmbServer, type HostileTrap } from "../fixtures/hostile-smb";

let hostile: HostileSmbServer;
before(async () => {
  hostile = await startHostileSmb();
});
after(() => hostile.close());

// Small on purpose: the client talks only to the hostile fake server, whose traps are meant to time out.
const TIMEOUT_MS = 400;

async function withClient<T>(trap: HostileTrap, work: (client: Smb2Client) => Promise<T>): Promise<T> {
  hostile.trap = trap;
  const client = new Smb2Client({ host: "127.0.0.1", port: hostile.port, username: "anyone", password: "anything", timeoutMs: TIMEOUT_MS });
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}

describe("a hostile SMB server", () => {
  it("behaving, it lists its share and folder (the fixture speaks enough SMB2)", async () => {
    await withClient("none", async (client) => {
      assert.deepEqual((await client.listShares()).map((s) => s.name), [HOSTILE_SHARE, "IPC$"]);
      assert.deepEqual((await client.listDirectory(HOSTILE_SHARE, "")).map((e) => e.name), [HOSTILE_FILE]);
    });
  });

  it("endless STATUS_PENDING: the request fails at its overall deadline, which PENDING never restarts", async () => {
    const before = hostile.interimsSent;
    await withClient("pending", async (client) => {
      await assert.rejects(client.connect(), /gave no final answer within \d+ ms \(command 1; it kept saying STATUS_PENDING\)/);
      // Far more interim replies than timeouts fit in the deadline: each would have restarted the old timeout.
      assert.ok(client.stats.interimResponses > REQUEST_DEADLINE_TIMEOUTS, `${client.stats.interimResponses} interim replies`);
    });
    assert.ok(hostile.interimsSent > before);
  });

  it("silence: connecting succeeds, the first request times out", async () => {
    await withClient("silence", async (client) => {
      await assert.rejects(client.connect(), new RegExp(`did not answer within ${TIMEOUT_MS} ms \\(command 0\\)`));
    });
  });

  it("a DCE/RPC fragment of length 0 is refused instead of looping for ever", async () => {
    await withClient("zero-fragment", async (client) => {
      await assert.rejects(client.listShares(), /srvsvc: a fragment length of 0, shorter than the 16-byte header/);
    });
  });

  it("a pipe reply that says 'more' for ever stops at the read cap", async () => {
    await withClient("endless-pipe", async (client) => {
      await assert.rejects(client.listShares(), new RegExp(`srvsvc: no complete reply after ${DEFAULT_MAX_PIPE_READS} pipe reads; abandoned`));
    });
  });

  it("an IOCTL reply claiming 4 GB of output is malformed, not read past its frame", async () => {
    await withClient("absurd-sizes", async (client) => {
      await assert.rejects(client.listShares(), /malformed IOCTL reply/);
    });
  });

  it("a folder listing of new names without end stops at the entry cap", async () => {
    await withClient("endless-listing", async (client) => {
      await assert.rejects(client.listDirectory(HOSTILE_SHARE, ""), new RegExp(`more than ${LISTING_LIMITS.maxEntries} entries`));
    });
  });

  it("one name a page for ever stops at the page cap", async () => {
    await withClient("one-entry-pages", async (client) => {
      await assert.rejects(client.listDirectory(HOSTILE_SHARE, ""), new RegExp(`did not end within ${LISTING_LIMITS.maxPages} pages`));
    });
  });

  it("an empty page said to be a success ends the listing with an error", async () => {
    await withClient("empty-pages", async (client) => {
      await assert.rejects(client.listDirectory(HOSTILE_SHARE, ""), /sent an empty page in the listing of docs/);
    });
  });

  it("a folder entry whose name runs past its reply is malformed", async () => {
    await withClient("absurd-name", async (client) => {
      await assert.rejects(client.listDirectory(HOSTILE_SHARE, ""), /malformed QUERY_DIRECTORY entry/);
    });
  });

  it("a folder entry of 16 EB is malformed, not a size to read up to", async () => {
    await withClient("absurd-file-size", async (client) => {
      await assert.rejects(client.listDirectory(HOSTILE_SHARE, ""), /malformed QUERY_DIRECTORY entry \(a size of 18446744073709551615 bytes\)/);
    });
  });

  it("the connector words each as an SMB protocol error (reason protocol_error)", async () => {
    hostile.trap = "zero-fragment";
    const connector = new SmbConnector({ host: "127.0.0.1", port: hostile.port, serverName: "hostile", username: "anyone", password: "anything", timeoutMs: TIMEOUT_MS });
    try {
      const error = await connector.listShares().then(
        () => assert.fail("listed"),
        (e: Error & { reason?: string }) => e,
      );
      assert.equal(error.reason, "protocol_error");
      assert.match(error.message, /SMB protocol error talking to 127\.0\.0\.1:\d+: srvsvc: a fragment length of 0, shorter than the 16-byte header/);
    } finally {
      await connector.close();
    }
  });
});
