// Linking a Windows account (POST /users/me/smb_accounts) against a hostile SMB server
// (test/fixtures/hostile-smb.ts, issues 33 and 34): the login and the LSA/SAMR calls run on an SMB
// check thread, so each trap fails within SMB_CHECK_DEADLINE_S with a clear answer, records no
// link, counts nothing against the account, and the API answers other requests meanwhile. Only
// refused logins count toward the five a Windows account may fail in 15 minutes (decision 0483).
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { LINK_ATTEMPTS, LINK_TIMED_OUT } from "../../server/connectors/smb/smb-account-links.service";
import { hostileSourceBody, useHostileSmb, type HostileTrap } from "../fixtures/hostile-smb";
import { createGroup, signUp, type ApiResponse } from "../fixtures/http-client";
import { countRows } from "../fixtures/sluice-server";
import { waitFor } from "../fixtures/wait-for";

/**
 * Each step may take 4 s (the link's own cap, whatever SMB_TIMEOUT_MS says), so a silent server
 * fails at its first step; a link that goes on answering (pending, pipe-drip) is ended by the
 * deadline, which also bounds how long the checks of GET /users/me below have to answer.
 */
const CHECK_DEADLINE_S = 15;
const { hostile, sluice } = useHostileSmb({ checkDeadlineS: CHECK_DEADLINE_S, smbTimeoutMs: 4000 });
const { request } = sluice;

/** Every link below is as this one account on this one server: the attempts they count are one counter. */
const ACCOUNT = { username: "HOSTILE\\anyone", password: "anything" };
const SERVER_UNREACHABLE = { detail: "SMB server unreachable" };
const TIMED_OUT = { detail: LINK_TIMED_OUT };

describe("linking a Windows account on a hostile SMB server", () => {
  const owner = { token: "", sourceId: "" };
  before(async () => {
    const { token } = await signUp(request, "link-hostile");
    owner.token = token;
    const group = await createGroup(request, token);
    hostile.trap = "none";
    const made = await request("POST", `/data_sources/smb/${group}`, { token, body: hostileSourceBody(hostile.port, `Hostile ${Date.now()}`, true) });
    assert.equal(made.status, 201, made.text);
    owner.sourceId = made.body.data_source.id;
  });

  const link = () => request("POST", "/users/me/smb_accounts", { token: owner.token, body: { data_source_id: owner.sourceId, ...ACCOUNT } });

  /** Nothing of a failed link is kept: no row, no link in the list. */
  async function assertNothingLinked(rowsBefore: number): Promise<void> {
    assert.equal(await countRows(sluice.server, "smb_account_links"), rowsBefore);
    assert.deepEqual((await request("GET", "/users/me/smb_accounts", { token: owner.token })).body, []);
  }

  for (const [trap, answer] of [
    ["silence", TIMED_OUT],
    ["zero-fragment", SERVER_UNREACHABLE],
    ["endless-pipe", SERVER_UNREACHABLE],
    ["absurd-sizes", SERVER_UNREACHABLE],
  ] as Array<[HostileTrap, { detail: string }]>) {
    it(`${trap}: 503 ${JSON.stringify(answer.detail)}, nothing linked`, async () => {
      hostile.trap = trap;
      const rows = await countRows(sluice.server, "smb_account_links");
      const res = await link();
      assert.equal(res.status, 503, res.text);
      assert.deepEqual(res.body, answer);
      await assertNothingLinked(rows);
    });
  }

  /**
   * Starts a link, waits until the hostile server holds it (`held`), and asks GET /users/me
   * meanwhile: it must answer while the link is still under way, which it could not if the link
   * ran on the API's thread. The link is held until the deadline, so the request has the whole
   * deadline to answer in, not a latency budget.
   */
  async function linkWhileServing(held: () => boolean, what: string): Promise<ApiResponse> {
    let linkAnswered = false;
    const linking = link().finally(() => {
      linkAnswered = true;
    });
    await waitFor(held, what);
    const me = await request("GET", "/users/me", { token: owner.token });
    assert.equal(me.status, 200, me.text);
    assert.equal(linkAnswered, false, "GET /users/me answered while the link was still talking to the server");
    return linking;
  }

  for (const [trap, held] of [
    ["pending", () => hostile.interimsSent],
    ["pipe-drip", () => hostile.pipeDrips],
  ] as Array<[HostileTrap, () => number]>) {
    it(`${trap}: held until the deadline, then 503 saying the server did not answer in time; GET /users/me answers meanwhile`, async () => {
      hostile.trap = trap;
      const rows = await countRows(sluice.server, "smb_account_links");
      const seen = held();
      const res = await linkWhileServing(() => held() > seen, `the hostile server holding the link (${trap})`);
      assert.equal(res.status, 503, res.text);
      // pipe-drip would go on for 4096 reads (over 3 minutes) and end as a protocol error: only the deadline gives this answer.
      assert.deepEqual(res.body, TIMED_OUT);
      await assertNothingLinked(rows);
    });
  }

  it(`none of those failures counted: ${LINK_ATTEMPTS.limit} refused logins as the same account answer 400, the next 429 with Retry-After`, async () => {
    hostile.trap = "refuse-login";
    const rows = await countRows(sluice.server, "smb_account_links");
    for (let i = 0; i < LINK_ATTEMPTS.limit; i++) {
      const res = await link();
      assert.equal(res.status, 400, `refused login ${i + 1}: ${res.text}`);
      assert.match(res.body.detail, /refused this Windows account.*STATUS_LOGON_FAILURE/);
    }
    hostile.trap = "none";
    const refused = await link();
    assert.equal(refused.status, 429, refused.text);
    assert.ok(Number(refused.headers.get("retry-after")) > 0);
    await assertNothingLinked(rows);
  });
});
