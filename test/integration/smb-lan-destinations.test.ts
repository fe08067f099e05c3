// npm test: once
// Why: which SMB destinations a LAN server may dial is decided before any storage; SMB sources on PostgreSQL are re-run by smb-sources.
// SSRF by default (issue 34): a server reachable from the LAN (HOST a non-loopback address of this
// machine) lets SMB sources dial no loopback, link-local, 0.0.0.0/8 or multicast address and only
// the SMB ports, unless SMB_ALLOWED_NETWORKS / SMB_ALLOWED_PORTS say otherwise; a refused
// destination is never dialled and answers alike whether anything listens there or not.
import assert from "node:assert/strict";
import net from "node:net";
import os from "node:os";
import { after, before, describe, it } from "node:test";
import { client, createGroup, signUp, type Request } from "../fixtures/http-client";
import { startHostileSmb, type HostileSmbServer } from "../fixtures/hostile-smb";
import { startSluice, type SluiceServer } from "../fixtures/sluice-server";

/** A non-loopback IPv4 address of this machine, to bind the API to; none: the tests skip. */
const LAN_ADDRESS = Object.values(os.networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === "IPv4" && !entry.internal)?.address;

let hostile: HostileSmbServer;
let closedPort: number;
const servers: SluiceServer[] = [];

before(async () => {
  hostile = await startHostileSmb();
  // A port with nothing behind it: listened on, then closed.
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  closedPort = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});
after(async () => {
  for (const server of servers) await server.stop();
  await hostile.close();
});

async function lanServer(env: Record<string, string>): Promise<{ request: Request; token: string; group: string }> {
  // SIGNUP=open: sign-up on a LAN server is by invitation otherwise (issue 34 item 1).
  // A small SMB_TIMEOUT_MS on purpose: the destinations dialled are a closed port and the hostile fake server, never Samba.
  const server = await startSluice({ env: { HOST: LAN_ADDRESS!, SIGNUP: "open", SMB_TIMEOUT_MS: "1000", ...env } });
  servers.push(server);
  const request = client(server.api);
  const { token } = await signUp(request, "lan");
  return { request, token, group: await createGroup(request, token) };
}

function smbBody(target: { ip?: string; name?: string; port: number }) {
  return {
    data_source: { data_source_name: `LAN ${Date.now()} ${Math.random()}` },
    smb_source: {
      remote_system_username: "anyone",
      remote_smb_password: "anything",
      remote_system_name: target.name ?? "files",
      local_system_name: "SLUICE-TEST",
      ...(target.ip ? { default_ip: target.ip } : {}),
      port: target.port,
    },
  };
}

describe("SMB destinations on a LAN server", { skip: LAN_ADDRESS ? false : "this machine has no non-loopback IPv4 address" }, () => {
  it("refuses loopback (open port or closed alike), link-local and a name resolving to loopback; only the listed ports; nothing dialled", async () => {
    const { request, token, group } = await lanServer({ SMB_ALLOWED_PORTS: `${hostile.port},${closedPort}` });
    const dialled = hostile.connections;
    const create = (target: Parameters<typeof smbBody>[0]) => request("POST", `/data_sources/smb/${group}`, { token, body: smbBody(target) });

    const open = await create({ ip: "127.0.0.1", port: hostile.port });
    const closed = await create({ ip: "127.0.0.1", port: closedPort });
    assert.equal(open.status, 400, open.text);
    assert.match(open.body.detail, /^The SMB server 127\.0\.0\.1 is outside the networks Sluice may connect to \(SMB_ALLOWED_NETWORKS\); ask the administrator$/);
    assert.deepEqual(closed.body, open.body, "an open and a closed port answer alike");
    assert.equal(closed.status, open.status);

    for (const target of [{ ip: "169.254.169.254", port: hostile.port }, { ip: "0.0.0.0", port: hostile.port }, { ip: "224.0.0.1", port: hostile.port }, { name: "localhost", port: hostile.port }]) {
      const res = await create(target);
      assert.equal(res.status, 400, JSON.stringify(target));
      assert.match(res.body.detail, /is outside the networks Sluice may connect to \(SMB_ALLOWED_NETWORKS\)/);
    }
    const port = await create({ ip: LAN_ADDRESS, port: 445 });
    assert.equal(port.status, 400);
    assert.equal(port.body.detail, "Port 445 is not one Sluice may connect to for SMB (SMB_ALLOWED_PORTS); ask the administrator");
    assert.equal(hostile.connections, dialled, "a refused destination is never dialled");
    assert.equal((await request("GET", "/data_sources", { token })).body.length, 0, "nothing created");
  });

  it("SMB_ALLOWED_NETWORKS and SMB_ALLOWED_PORTS let an administrator allow them: created and listed", async () => {
    const { request, token, group } = await lanServer({ SMB_ALLOWED_NETWORKS: "127.0.0.0/8", SMB_ALLOWED_PORTS: String(hostile.port) });
    const dialled = hostile.connections;
    const made = await request("POST", `/data_sources/smb/${group}`, { token, body: smbBody({ ip: "127.0.0.1", port: hostile.port }) });
    assert.equal(made.status, 201, made.text);
    const listing = await request("GET", `/data_sources/smb/list/${made.body.data_source.id}`, { token });
    assert.equal(listing.status, 200, listing.text);
    assert.deepEqual(listing.body, { shares: { docs: ["report.txt"] } });
    assert.ok(hostile.connections > dialled);
  });
});
