import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { md4 } from "../../server/connectors/smb/md4";
import {
  NegotiateFlags,
  computeNtlmV2Response,
  decodeChallenge,
  encodeAuthenticate,
  encodeNegotiate,
  ntlmGetMic,
  ntlmSealKey,
  ntlmSignKey,
  ntlmVerifyMic,
  ntowfv1,
  ntowfv2,
  rc4,
} from "../../server/connectors/smb/ntlm";
import { createHmac } from "node:crypto";

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

// MS-NLMP 4.2.4.4 (NTLMv2 GSS_WrapEx example): the keys, the sealed text and the signature.
describe("NTLM session security (MS-NLMP 4.2.4.4 test vectors)", () => {
  const exportedSessionKey = Buffer.alloc(16, 0x55);
  const plaintext = Buffer.from("Plaintext", "utf16le");

  test("SIGNKEY and SEALKEY, client to server", () => {
    assert.equal(ntlmSignKey(exportedSessionKey, "client-to-server").toString("hex"), "4788dc861b4782f35d43fd98fe1a2d39");
    assert.equal(ntlmSealKey(exportedSessionKey, "client-to-server").toString("hex"), "59f600973cc4960a25480a7c196e4c58");
  });

  test("sealed data and signature: the checksum is HMAC_MD5(SigningKey, SeqNum || message), sealed by the same RC4 stream", () => {
    const checksum = createHmac("md5", ntlmSignKey(exportedSessionKey, "client-to-server")).update(Buffer.alloc(4)).update(plaintext).digest().subarray(0, 8);
    const stream = rc4(ntlmSealKey(exportedSessionKey, "client-to-server"), Buffer.concat([plaintext, checksum]));
    assert.equal(stream.subarray(0, 18).toString("hex"), "54e50165bf1936dc996020c1811b0f06fb5f");
    assert.equal(stream.subarray(18).toString("hex"), "7fb38ec5c55d4976");
  });

  test("GetMIC (sign only, first message): version 1, the sealed checksum, sequence 0", () => {
    const mic = ntlmGetMic(exportedSessionKey, "client-to-server", plaintext);
    const checksum = createHmac("md5", ntlmSignKey(exportedSessionKey, "client-to-server")).update(Buffer.alloc(4)).update(plaintext).digest().subarray(0, 8);
    assert.equal(mic.length, 16);
    assert.equal(mic.readUInt32LE(0), 1);
    assert.deepEqual(rc4(ntlmSealKey(exportedSessionKey, "client-to-server"), mic.subarray(4, 12)), checksum);
    assert.equal(mic.readUInt32LE(12), 0);
    // The server's direction uses its own keys: the client's MIC does not pass as the server's.
    assert.equal(ntlmVerifyMic(exportedSessionKey, plaintext, mic), false);
    assert.equal(ntlmVerifyMic(exportedSessionKey, plaintext, ntlmGetMic(exportedSessionKey, "server-to-client", plaintext)), true);
  });
});

describe("AUTHENTICATE with a MIC (MS-NLMP 3.1.5.1.2)", () => {
  const serverChallenge = hex("0123456789abcdef");
  const timestamp = hex("0090d336b734c301");
  // MsvAvNbDomainName "Domain", MsvAvNbComputerName "Server", MsvAvTimestamp, MsvAvEOL.
  const targetInfo = Buffer.concat([
    hex("02000c0044006f006d00610069006e00 01000c00530065007200760065007200"),
    hex("07000800"),
    timestamp,
    hex("00000000"),
  ]);
  const name = Buffer.from("Domain", "utf16le");
  const challengeMessage = Buffer.alloc(56);
  challengeMessage.write("NTLMSSP\0", 0, "latin1");
  challengeMessage.writeUInt32LE(2, 8);
  challengeMessage.writeUInt16LE(name.length, 12);
  challengeMessage.writeUInt16LE(name.length, 14);
  challengeMessage.writeUInt32LE(56, 16);
  challengeMessage.writeUInt32LE((NegotiateFlags.UNICODE | NegotiateFlags.NTLM | NegotiateFlags.TARGET_INFO | NegotiateFlags.KEY_EXCH | NegotiateFlags.N128) >>> 0, 20);
  serverChallenge.copy(challengeMessage, 24);
  challengeMessage.writeUInt16LE(targetInfo.length, 40);
  challengeMessage.writeUInt16LE(targetInfo.length, 42);
  challengeMessage.writeUInt32LE(56 + name.length, 44);
  const raw = Buffer.concat([challengeMessage, name, targetInfo]);
  const negotiate = encodeNegotiate();
  const exportedSessionKey = Buffer.alloc(16, 0x55);
  const clientChallenge = hex("aaaaaaaaaaaaaaaa");

  const challenge = decodeChallenge(raw);
  const auth = encodeAuthenticate({
    challenge,
    user: "User",
    password: "Password",
    domain: "Domain",
    workstation: "COMPUTER",
    negotiateMessage: negotiate,
    spn: "cifs/server",
    clientChallenge,
    exportedSessionKey,
  });
  const field = (i: number) => auth.message.subarray(auth.message.readUInt32LE(16 + i * 8), auth.message.readUInt32LE(16 + i * 8) + auth.message.readUInt16LE(12 + i * 8));

  test("the challenge's target name is read (the domain of a user typed without one)", () => {
    assert.equal(challenge.targetName, "Domain");
    assert.deepEqual(challenge.raw, raw);
  });

  test("MIC = HMAC_MD5(ExportedSessionKey, NEGOTIATE || CHALLENGE || AUTHENTICATE with a zero MIC), at offset 72", () => {
    assert.equal(auth.hasMic, true);
    const zeroed = Buffer.from(auth.message);
    zeroed.fill(0, 72, 88);
    const expected = createHmac("md5", exportedSessionKey).update(negotiate).update(raw).update(zeroed).digest();
    assert.deepEqual(auth.message.subarray(72, 88), expected);
    assert.equal(auth.message.readUInt32LE(16), 88, "the payload starts after Version and MIC");
  });

  test("the NTLMv2 blob carries MsvAvFlags = MIC present, a zero channel binding and the SPN; the proof covers them", () => {
    const nt = field(1);
    const blobPairs = nt.subarray(16 + 28);
    const pairs = new Map<number, Buffer>();
    for (let off = 0; off + 4 <= blobPairs.length; ) {
      const id = blobPairs.readUInt16LE(off);
      const len = blobPairs.readUInt16LE(off + 2);
      if (id === 0) break;
      pairs.set(id, blobPairs.subarray(off + 4, off + 4 + len));
      off += 4 + len;
    }
    assert.equal(pairs.get(6)!.readUInt32LE(0), 2);
    assert.deepEqual(pairs.get(10), Buffer.alloc(16));
    assert.equal(pairs.get(9)!.toString("utf16le"), "cifs/server");
    assert.deepEqual(pairs.get(7), timestamp);
    const again = computeNtlmV2Response({
      responseKey: ntowfv2("Password", "User", "Domain"),
      serverChallenge,
      clientChallenge,
      timestamp,
      targetInfo: nt.subarray(16 + 28, nt.length - 4),
    });
    assert.deepEqual(again.ntChallengeResponse, nt);
    assert.equal(field(0).toString("hex"), "00".repeat(24), "LMv2 is zero when the server sent a timestamp");
  });

  test("without a timestamp from the server, or without the NEGOTIATE message, no MIC", () => {
    const noTime = encodeAuthenticate({ challenge, user: "User", password: "Password", domain: "Domain", workstation: "C" });
    assert.equal(noTime.hasMic, false);
    assert.deepEqual(noTime.message.subarray(72, 88), Buffer.alloc(16));
  });
});
