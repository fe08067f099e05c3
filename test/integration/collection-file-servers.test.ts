import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { createGroup, signUp } from "../fixtures/http-client";
import { startSamba, type SambaServer } from "../fixtures/samba";
import { useSluice } from "../fixtures/use-sluice";

/**
 * GET /collections' `file_server_permissions` (issue 33 item 7, decision 0450): one `{server}` per
 * file server whose permissions decide what the caller sees, named as a Windows account link names
 * its server, so the screens can say whose permissions apply.
 */
describe("GET /collections: file_server_permissions", () => {
  let samba: SambaServer;
  const sluice = useSluice({
    env: async () => {
      samba = await startSamba();
      return {};
    },
  });
  after(() => samba?.stop());
  const request = sluice.request;
  const addSource = async (token: string, groupId: string, name: string, serverName: string, sourcePermissions: boolean) => {
    const res = await request("POST", `/data_sources/smb/${groupId}`, {
      token,
      body: {
        data_source: { data_source_name: `${name} ${Math.random()}` },
        smb_source: {
          remote_system_username: samba.username,
          remote_smb_password: samba.password,
          remote_system_name: serverName,
          default_ip: "127.0.0.1",
          port: samba.port,
          source_permissions: sourcePermissions,
        },
      },
    });
    assert.equal(res.status, 201, res.text);
    return res.body as { data_source: { id: string }; pipeline: { collection_id: string } };
  };
  const listed = async (token: string) =>
    new Map(((await request("GET", "/collections", { token })).body as Array<{ id: string; file_server_permissions: unknown }>).map((c) => [c.id, c.file_server_permissions]));

  it("names the server of a permission source's collection (as links name it), none for a plain source's, once per server, and follows pipelines", async () => {
    const { token } = await signUp(request, "fsp");
    const groupId = await createGroup(request, token);
    const withPermissions = await addSource(token, groupId, "perm", "FS.Example.LAN", true);
    const plain = await addSource(token, groupId, "plain", "other-host", false);
    const created = await request("POST", "/collections", { token, body: { name: `empty_${process.pid}_${Date.now()}`, owner_group_id: groupId } });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body.file_server_permissions, [], "a new collection has no source yet");

    let collections = await listed(token);
    assert.deepEqual(collections.get(withPermissions.pipeline.collection_id), [{ server: "fs.example.lan" }]);
    assert.deepEqual(collections.get(plain.pipeline.collection_id), []);
    assert.deepEqual(collections.get(created.body.id), []);

    // The plain source's collection gets the permission source too; the permission collection a plain one and a second permission source on the same server.
    const pipe = async (dataSourceId: string, collectionId: string) =>
      assert.equal((await request("POST", "/data_pipelines", { token, body: { name: `p ${Math.random()}`, data_source_id: dataSourceId, collection_id: collectionId } })).status, 201);
    await pipe(withPermissions.data_source.id, plain.pipeline.collection_id);
    await pipe(plain.data_source.id, withPermissions.pipeline.collection_id);
    const second = await addSource(token, groupId, "perm 2", "fs.example.lan", true);
    await pipe(second.data_source.id, withPermissions.pipeline.collection_id);
    collections = await listed(token);
    assert.deepEqual(collections.get(plain.pipeline.collection_id), [{ server: "fs.example.lan" }]);
    assert.deepEqual(collections.get(withPermissions.pipeline.collection_id), [{ server: "fs.example.lan" }], "one entry per server");

    // Deleting the permission sources leaves the collections as plain ones.
    for (const id of [withPermissions.data_source.id, second.data_source.id]) {
      const deleted = await request("DELETE", `/data_sources/${id}`, { token });
      assert.ok(deleted.status === 204 || deleted.status === 200, deleted.text);
    }
    collections = await listed(token);
    assert.deepEqual(collections.get(plain.pipeline.collection_id), []);
  });

  it("answers the same field on PUT /collections/{id}/embedding's collection", async () => {
    const { token } = await signUp(request, "fsp-embed");
    const groupId = await createGroup(request, token);
    const source = await addSource(token, groupId, "perm", "fs.example.lan", true);
    const res = await request("PUT", `/collections/${source.pipeline.collection_id}/embedding`, { token, body: { model: null } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.file_server_permissions, [{ server: "fs.example.lan" }]);
  });
});
