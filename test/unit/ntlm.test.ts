import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { md4 } from "../../server/connectors/smb/md4";
import {
  NegotiateFlags,
  computeNtlmV2Response,
  decodeChallenge,
  encodeAuthenticate,
  ntowfv1,
  ntowfv2,
  rc4,
} from "../../server/connectors/smb/ntlm";

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ""), "hex");

describe("MD4 (RFC 1320 appendix A.5)", () => {
  const vectors: Array<[string, string]> = [
    ["", "31d6cfe0d16ae931b73c59d7e0c089c0"],
    ["a", "bde52cb31de33e46245e05fbdbd6fb24"],
    ["abc", "a448017aaf21d8525fc10ae87aa6729d"],
    ["message digest", "d9130a8164549fe818874806e1c7014b"],
    ["abcdefghijklmnopqrstuvwxyz", "d79e1c308aa5bbcdeea8ed63df412da9"],
    ["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "043f8582f241db351ce627e153e7f0e4"],
    ["12345678901234567890123456789012345678901234567890123456789012345678901234567890", "e33b4ddc9c38f2199c3e7b164fcc0536"],
  ];
  for (const [input, digest] of vectors) {
    test(`md4(${JSON.stringify(input.slice(0, 20))}${input.length > 20 ? "..." : ""})`, () => {
      assert.equal(md4(Buffer.from(input, "latin1")).toString("hex"), digest);
    });
  }
});

// MS-NLMP 4.2.1 common values and 4.2.4 NTLMv2 authentication.
describe("NTLMv2 (MS-NLMP 4.2.4 test vectors)", () => {
  const user = "User";
  const domain = "Domain";
  const password = "Password";
  const serverChallenge = hex("0123456789abcdef");
  const clientChallenge = hex("aaaaaaaaaaaaaaaa");
  const time = Buffer.alloc(8);
  const randomSessionKey = Buffer.alloc(16, 0x55);
  // AV pairs: MsvAvNbDomainName "Domain", MsvAvNbComputerName "Server", MsvAvEOL.
  const targetInfo = hex(
    "02000c0044006f006d00610069006e00 01000c005300650072007600650072000000 0000".replace(/\s/g, ""),
  );

  test("NTOWFv1 (4.2.2.1.2)", () => {
    assert.equal(ntowfv1(password).toString("hex"), "a4f49c406510bdcab6824ee7c30fd852");
  });

  test("NTOWFv2 (4.2.4.1.1)", () => {
    assert.equal(ntowfv2(password, user, domain).toString("hex"), "0c868a403bfd7a93a3001ef22ef02e3f");
  });

  const r = computeNtlmV2Response({
    responseKey: ntowfv2(password, user, domain),
    serverChallenge,
    clientChallenge,
    timestamp: time,
    targetInfo,
  });

  test("session base key (4.2.4.1.2)", () => {
    assert.equal(r.sessionBaseKey.toString("hex"), "8de40ccadbc14a82f15cb0ad0de95ca3");
  });

  test("LMv2 response (4.2.4.2.1)", () => {
    assert.equal(r.lmChallengeResponse.toString("hex"), "86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa");
  });

  test("NTProofStr of the NTLMv2 response (4.2.4.2.2)", () => {
    assert.equal(r.ntProofStr.toString("hex"), "68cd0ab851e51c96aabc927bebef6a1c");
    // The response is NTProofStr followed by the blob: 0x0101, reserved, time, client challenge, AV pairs.
    assert.equal(r.ntChallengeResponse.subarray(16, 18).toString("hex"), "0101");
    assert.deepEqual(r.ntChallengeResponse.subarray(32, 40), clientChallenge);
  });

  test("encrypted session key (4.2.4.2.3)", () => {
    assert.equal(rc4(r.sessionBaseKey, randomSessionKey).toString("hex"), "c5dad2544fc9799094ce1ce90bc9d03e");
  });

  test("AUTHENTICATE message carries the same responses and key", () => {
    // A CHALLENGE_MESSAGE as MS-NLMP 4.2.4.3 describes it (no version field).
    const flags = (NegotiateFlags.UNICODE | NegotiateFlags.NTLM | NegotiateFlags.TARGET_INFO | NegotiateFlags.KEY_EXCH | NegotiateFlags.N128) >>> 0;
    const name = Buffer.from("Server", "utf16le");
    const challenge = Buffer.alloc(48);
    challenge.write("NTLMSSP\0", 0, "latin1");
    challenge.writeUInt32LE(2, 8);
    challenge.writeUInt16LE(name.length, 12);
    challenge.writeUInt16LE(name.length, 14);
    challenge.writeUInt32LE(48, 16);
    challenge.writeUInt32LE(flags, 20);
    serverChallenge.copy(challenge, 24);
    challenge.writeUInt16LE(targetInfo.length, 40);
    challenge.writeUInt16LE(targetInfo.length, 42);
    challenge.writeUInt32LE(48 + name.length, 44);
    // Wrapped in junk bytes the way SPNEGO wraps it: the decoder finds the signature.
    const parsed = decodeChallenge(Buffer.concat([hex("a181"), challenge, name, targetInfo]));
    assert.deepEqual(parsed.serverChallenge, serverChallenge);
    assert.deepEqual(parsed.targetInfo, targetInfo);

    const { message, sessionKey } = encodeAuthenticate({
      challenge: parsed,
      user,
      password,
      domain,
      workstation: "COMPUTER",
      clientChallenge,
      exportedSessionKey: randomSessionKey,
    });
    const field = (i: number) => {
      const len = message.readUInt16LE(12 + i * 8);
      const off = message.readUInt32LE(16 + i * 8);
      return message.subarray(off, off + len);
    };
    assert.equal(message.readUInt32LE(8), 3);
    assert.equal(field(2).toString("utf16le"), "Domain");
    assert.equal(field(3).toString("utf16le"), "User");
    assert.equal(field(4).toString("utf16le"), "COMPUTER");
    assert.equal(field(5).toString("hex"), rc4(hmacKey(field(1)), randomSessionKey).toString("hex"));
    assert.deepEqual(sessionKey, randomSessionKey);
    assert.ok(message.readUInt32LE(60) & NegotiateFlags.KEY_EXCH);

    function hmacKey(nt: Buffer): Buffer {
      // The session base key for this (time-stamped) response, recomputed from its own blob.
      const again = computeNtlmV2Response({
        responseKey: ntowfv2(password, user, domain),
        serverChallenge,
        clientChallenge,
        timestamp: nt.subarray(24, 32),
        targetInfo,
      });
      assert.deepEqual(again.ntChallengeResponse, nt);
      return again.sessionBaseKey;
    }
  });
});
