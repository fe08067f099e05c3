import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { NTLMSSP_OID, NegState, mechTypeList, negTokenInit, negTokenResp, offeredMechs, parseNegTokenResp } from "../../server/connectors/smb/spnego";
import { parseSmbUsername } from "../../server/connectors/smb/smb-username";

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ""), "hex");

describe("SPNEGO (RFC 4178) around NTLMSSP", () => {
  const ntlmNegotiate = Buffer.concat([Buffer.from("NTLMSSP\0", "latin1"), hex("01000000 978208e2"), Buffer.alloc(24)]);

  test("NegTokenInit: the DER a Windows client sends, NTLMSSP as the only mechanism", () => {
    // The same shape as the first SESSION_SETUP of MS-SMB2's 3.1.1 preauth example.
    const token = negTokenInit(ntlmNegotiate);
    assert.equal(
      token.subarray(0, 32).toString("hex"),
      "604806062b0601050502a03e303ca00e300c060a2b06010401823702020aa22a",
    );
    assert.deepEqual(token.subarray(32 + 2), ntlmNegotiate);
    assert.equal(mechTypeList().toString("hex"), "300c060a2b06010401823702020a");
  });

  test("NegTokenResp: the AUTHENTICATE message and the mechListMIC, long lengths included", () => {
    const auth = Buffer.alloc(300, 7);
    const mic = Buffer.alloc(16, 9);
    const token = negTokenResp(auth, mic);
    assert.equal(token[0], 0xa1);
    // The client's answer parses like a server's: our parser reads both ends of the exchange.
    const parsed = parseNegTokenResp(token);
    assert.deepEqual(parsed.responseToken, auth);
    assert.deepEqual(parsed.mechListMic, mic);
    assert.equal(parsed.negState, undefined);
  });

  test("the server's NegTokenResp from MS-SMB2's 3.1.1 example: accept-incomplete, NTLMSSP, the CHALLENGE", () => {
    const token = hex(
      "a181b03081ada0030a0101a10c060a2b06010401823702020aa281970481944e544c4d53535000020000000c000c003800000015828ae20d1d8ba31179d008000000000000000050005000440000000a0092270000000f53005500540033003100310002000c0053005500540033003100310001000c0053005500540033003100310004000c0053005500540033003100310003000c0053005500540033003100310007000800a1a1f5adcbaed00100000000",
    );
    const parsed = parseNegTokenResp(token);
    assert.equal(parsed.negState, NegState.ACCEPT_INCOMPLETE);
    assert.deepEqual(parsed.supportedMech, NTLMSSP_OID);
    assert.equal(parsed.responseToken!.subarray(0, 8).toString("latin1"), "NTLMSSP\0");
    assert.equal(parsed.responseToken!.length, 0x94);
  });

  test("the mechanisms of the server's NegTokenInit2; null for an empty or non-SPNEGO buffer", () => {
    // From the same example's NEGOTIATE response: NEGOEX and NTLMSSP.
    const init2 = hex(
      `6082013c06062b0601050502a08201303082012ca01a3018060a2b06010401823702021e060a2b06010401823702020aa282010c04820108${"00".repeat(0x108)}`,
    );
    const mechs = offeredMechs(init2)!;
    assert.equal(mechs.length, 2);
    assert.ok(mechs[1].equals(NTLMSSP_OID));
    assert.equal(offeredMechs(Buffer.alloc(0)), null);
    assert.equal(offeredMechs(Buffer.from("NTLMSSP\0", "latin1")), null);
  });

  test("malformed tokens are errors, not crashes", () => {
    assert.throws(() => parseNegTokenResp(hex("a1")), /Truncated/);
    assert.throws(() => parseNegTokenResp(hex("a105300300")), /Truncated|Malformed/);
    assert.throws(() => parseNegTokenResp(hex("6003020100")), /not a NegTokenResp/);
  });
});

describe("user names as people type them", () => {
  test("DOMAIN\\user: that domain", () => {
    assert.deepEqual(parseSmbUsername("WORKGROUP\\alice"), { domain: "WORKGROUP", user: "alice" });
    assert.deepEqual(parseSmbUsername(" CORP\\bob.smith "), { domain: "CORP", user: "bob.smith" });
  });
  test("user@domain: the UPN whole as the user, an empty domain (as Windows sends it)", () => {
    assert.deepEqual(parseSmbUsername("alice@corp.example"), { user: "alice@corp.example", domain: "" });
  });
  test("plain user: the domain option, else the server's own (undefined)", () => {
    assert.deepEqual(parseSmbUsername("alice"), { user: "alice", domain: undefined });
    assert.deepEqual(parseSmbUsername("alice", "CORP"), { user: "alice", domain: "CORP" });
    assert.deepEqual(parseSmbUsername("CORP2\\alice", "CORP"), { user: "alice", domain: "CORP2" }, "a typed domain wins");
  });
});
