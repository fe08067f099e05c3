import assert from "node:assert/strict";
import net from "node:net";
import { after, describe, it } from "node:test";
import { openStorage } from "../../server/composition/compose";
import { loadConfig } from "../../server/config";
import { startFakeGoogle, type FakeGoogle } from "../fixtures/fake-google";
import { createGroup, signUp } from "../fixtures/http-client";
import { useSluice } from "../fixtures/use-sluice";

let google: FakeGoogle;

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const sluice = useSluice({
  env: async () => {
    google = await startFakeGoogle();
    const port = await freePort();
    return { ...google.env, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` };
  },
});
const { request } = sluice;
after(async () => {
  await google.close();
});

/** The Drive refresh token the server keeps for a user, read from its secret store as the server reads it. */
async function storedRefreshToken(userId: string): Promise<string | null> {
  const { dataDir, databaseUrl } = sluice.server;
  const config = loadConfig({ DATA_DIR: dataDir, SLUICE_SECRETS: "file", ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
  const storage = await openStorage(config, { warn: () => undefined });
  try {
    return await storage.secrets.get(`drive-refresh:${userId}`);
  } finally {
    await storage.index.close();
    await storage.vectors.close();
    await storage.db.destroy();
  }
}

describe("deleting an account with a Google Drive link", () => {
  it("is refused (409) while its grant reads a Drive source; once that is gone the account and its Drive tokens go", async () => {
    const user = await signUp(request, "drive-leaver");
    const connect = await request("POST", "/integrations/cloud/drive/connect?return_to=/", { token: user.token });
    assert.equal(connect.status, 200, connect.text);
    const authorize = await fetch(connect.body.auth_url, { redirect: "manual" });
    const callback = await fetch(authorize.headers.get("location")!, { redirect: "manual" });
    assert.equal(callback.status, 302);
    const userId = (await request("GET", "/users/me", { token: user.token })).body.id;
    assert.ok(await storedRefreshToken(userId), "control: the grant's refresh token is kept");

    const group = await createGroup(request, user.token, "drive-leaver");
    // Another member keeps the group (and so its collection) from blocking: the Drive rule is the one left.
    const colleague = await signUp(request, "drive-colleague");
    assert.equal((await request("PUT", `/user_groups/${group}/members/${colleague.email}`, { token: user.token })).status, 204);
    const source = await request("POST", "/data_sources/drive/", { token: user.token, body: { data_source: { data_source_name: "Leaver's Drive", owner_group_id: group } } });
    assert.equal(source.status, 201, source.text);
    const refused = await request("DELETE", "/users/me", { token: user.token });
    assert.equal(refused.status, 409);
    assert.match(refused.body.detail, /Google Drive grant reads 1 Drive source/);
    assert.equal((await request("GET", "/users/me", { token: user.token })).status, 200, "nothing deleted");

    assert.equal((await request("DELETE", `/data_sources/${source.body.data_source.id}`, { token: user.token })).status, 204);
    const deleted = await request("DELETE", "/users/me", { token: user.token });
    assert.equal(deleted.status, 204, deleted.text);
    assert.equal(await storedRefreshToken(userId), null, "the Drive tokens left the secret store");
  });
});
