// Linking a Windows account counts with the SMB source routes' connection attempts (decision
// 0486, issue 33): past SMB_CONNECT_LIMIT_PER_MINUTE a link answers 429 with Retry-After and a
// clear detail, connects to nothing and links nothing; the count is the one creations and share
// listings use, per user. Against the hostile fake (test/fixtures/hostile-smb.ts), which counts
// the connections it takes.
import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { createGroup, signUp } from "../fixtures/http-client";
import { hostileSourceBody, useHostileSmb } from "../fixtures/hostile-smb";
import { countRows } from "../fixtures/sluice-server";

/** Two a minute: the source's creation, then one link; the next link is over. */
const LIMIT = 2;
const WINDOW_MS = 60_000;
const { hostile, sluice } = useHostileSmb({ checkDeadlineS: 6, smbTimeoutMs: 1000, env: { SMB_CONNECT_LIMIT_PER_MINUTE: String(LIMIT) } });
const { request } = sluice;

describe("the account link route under the per-user SMB connection limit", () => {
  it("a link past the limit answers 429 with Retry-After, tries nothing and links nothing; other users are not held", async (t: TestContext) => {
    const { token } = await signUp(request, "link-limit");
    const group = await createGroup(request, token);
    hostile.trap = "none";
    const windowStart = Date.now();
    const made = await request("POST", `/data_sources/smb/${group}`, { token, body: hostileSourceBody(hostile.port, `Limited ${Date.now()}`, true) });
    assert.equal(made.status, 201, made.text);
    const link = () => request("POST", "/users/me/smb_accounts", { token, body: { data_source_id: made.body.data_source.id, username: "HOSTILE\\anyone", password: "wrong" } });
    // A refused login answers at once (the count is of attempts, whatever their answer).
    hostile.trap = "refuse-login";
    const first = await link();
    assert.equal(first.status, 400, first.text);

    const rows = await countRows(sluice.server, "smb_account_links");
    const connections = hostile.connections;
    const over = await link();
    if (over.status !== 429 && Date.now() - windowStart >= WINDOW_MS) return t.skip("the machine took over a minute for three requests: the window ended before the last");
    assert.equal(over.status, 429, over.text);
    const retryAfter = Number(over.headers.get("retry-after"));
    assert.ok(retryAfter >= 1 && retryAfter <= WINDOW_MS / 1000, `Retry-After ${retryAfter}`);
    assert.deepEqual(over.body, { detail: `Too many SMB connection attempts; try again in ${retryAfter} seconds` });
    assert.equal(hostile.connections, connections, "nothing dialled");
    assert.equal(await countRows(sluice.server, "smb_account_links"), rows);
    assert.deepEqual((await request("GET", "/users/me/smb_accounts", { token })).body, []);
    // One count: the share listing is over it too.
    const listing = await request("GET", `/data_sources/smb/list/${made.body.data_source.id}`, { token });
    assert.equal(listing.status, 429, listing.text);

    hostile.trap = "none";
    const other = await signUp(request, "link-limit-other");
    const theirs = await request("POST", `/data_sources/smb/${await createGroup(request, other.token)}`, { token: other.token, body: hostileSourceBody(hostile.port, `Theirs ${Date.now()}`) });
    assert.equal(theirs.status, 201, theirs.text);
  });

  it("the OpenAPI document names the 429 of the link route", async () => {
    const doc = (await request("GET", "/openapi.json")).body;
    const answer = doc.paths["/users/me/smb_accounts"].post.responses["429"];
    assert.match(answer.description, /SMB_CONNECT_LIMIT_PER_MINUTE/);
  });
});
