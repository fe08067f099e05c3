import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  AesCmac,
  Cipher,
  Dialect,
  MessageCipher,
  MessageSigner,
  PreauthHash,
  SigningAlgorithm,
  TransformError,
  deriveSessionKeys,
} from "../../server/connectors/smb/smb-crypto";

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ""), "hex");

describe("AES-CMAC (RFC 4493 section 4 examples)", () => {
  const cmac = new AesCmac(hex("2b7e1516 28aed2a6 abf71588 09cf4f3c"));
  const m = hex(
    "6bc1bee2 2e409f96 e93d7e11 7393172a ae2d8a57 1e03ac9c 9eb76fac 45af8e51 30c81c46 a35ce411 e5fbc119 1a0a52ef f69f2445 df4f9b17 ad2b417b e66c3710",
  );
  const vectors: Array<[number, string]> = [
    [0, "bb1d6929 e9593728 7fa37d12 9b756746"],
    [16, "070a16b4 6b4d4144 f79bdd9d d04a287c"],
    [40, "dfa66747 de9ae630 30ca3261 1497c827"],
    [64, "51f0bebf 7e3b9d92 fc497417 79363cfe"],
  ];
  for (const [len, mac] of vectors) {
    test(`Mlen = ${len}`, () => {
      assert.equal(cmac.mac(m.subarray(0, len)).toString("hex"), hex(mac).toString("hex"));
    });
  }
  test("a message given in pieces has the MAC of the whole", () => {
    for (const [len, mac] of vectors) {
      for (const cut of [0, 1, 15, 16, 17, 33]) {
        if (cut > len) continue;
        assert.equal(cmac.mac(m.subarray(0, cut), m.subarray(cut, len)).toString("hex"), hex(mac).toString("hex"), `${len}/${cut}`);
      }
    }
  });
});

// Microsoft Open Specifications blog, "SMB 3.1.1 Pre-authentication integrity in Windows 10":
// the hash after each message of a NEGOTIATE + NTLM SESSION_SETUP exchange, and the signing key.
describe("SMB 3.1.1 preauth integrity and key derivation (published test vector)", () => {
  const messages = [
    [
      "FE534D4240000100000000000000800000000000000000000100000000000000FFFE000000000000" +
        "00000000000000000000000000000000000000000000000024000500000000003F000000ECD86F32" +
        "6276024F9F7752B89BB33F3A70000000020000000202100200030203110300000100260000000000" +
        "010020000100FA49E6578F1F3A9F4CD3E9CC14A67AA884B3D05844E0E5A118225C15887F32FF0000" +
        "0200060000000000020002000100",
      "DD94EFC5321BB618A2E208BA8920D2F422992526947A409B5037DE1E0FE8C7362B8C47122594CDE0CE26AA9DFC8BCDBDE0621957672623351A7540F1E54A0426",
    ],
    [
      "FE534D4240000100000000000000010001000000000000000100000000000000FFFE000000000000" +
        "000000000000000000000000000000000000000000000000410001001103020039CBCAF329714942" +
        "BDCE5D60F09AB3FB2F000000000080000000800000008000D8DAE5ADCBAED00109094AB095AED001" +
        "80004001C00100006082013C06062B0601050502A08201303082012CA01A3018060A2B0601040182" +
        "3702021E060A2B06010401823702020AA282010C048201084E45474F455854530100000000000000" +
        "60000000700000007C7CC0FD06D6362D02DDE1CF343BFE292900F49750B4AA97934D9C4296B26E51" +
        "FD370471B235E15A50DAE15BD5489C87000000000000000060000000010000000000000000000000" +
        "5C33530DEAF90D4DB2EC4AE3786EC3084E45474F4558545303000000010000004000000098000000" +
        "7C7CC0FD06D6362D02DDE1CF343BFE295C33530DEAF90D4DB2EC4AE3786EC3084000000058000000" +
        "3056A05430523027802530233121301F06035504031318546F6B656E205369676E696E6720507562" +
        "6C6963204B65793027802530233121301F06035504031318546F6B656E205369676E696E67205075" +
        "626C6963204B6579010026000000000001002000010060A3C3B95C3C7CCD51EC536648D9B3AC74C4" +
        "83CA5B65385A251117BEB30712E50000020004000000000001000200",
      "324BFA92A4F3A190E466EBEA08D9C110DC88BFED758D9846ECC6F541CC1D02AE3C94A79F36011E997E13F841B91B50957AD07B19C8E2539C0B23FDAE09D2C513",
    ],
    [
      "FE534D4240000100000000000100800000000000000000000200000000000000FFFE000000000000" +
        "00000000000000000000000000000000000000000000000019000001010000000000000058004A00" +
        "0000000000000000604806062B0601050502A03E303CA00E300C060A2B06010401823702020AA22A" +
        "04284E544C4D5353500001000000978208E200000000000000000000000000000000060380250000" +
        "000F",
      "AC0B0F2B9986257700365E416D142A6EDC96DF03594A19E52A15F6BD0D041CD5D432F8ED42C55E33197A50C9EC00F1462B50C592211B1471A04B56088FDFD5F9",
    ],
    [
      "FE534D4240000100160000C00100010001000000000000000200000000000000FFFE000000000000" +
        "190000000010000000000000000000000000000000000000090000004800B300A181B03081ADA003" +
        "0A0101A10C060A2B06010401823702020AA281970481944E544C4D53535000020000000C000C0038" +
        "00000015828AE20D1D8BA31179D008000000000000000050005000440000000A0092270000000F53" +
        "005500540033003100310002000C0053005500540033003100310001000C00530055005400330031" +
        "00310004000C0053005500540033003100310003000C0053005500540033003100310007000800A1" +
        "A1F5ADCBAED00100000000",
      "2729E3440DFDDD839E37193F6E8F20C20CEFB3469E453A70CD980EEC06B88357 40A73760085633364C8989895ECE81BF102DEEB14D4B7D48AFA76901A7A38387",
    ],
    [
      "FE534D4240000100000000000100800000000000000000000300000000000000FFFE000000000000" +
        "1900000000100000000000000000000000000000000000001900000101000000000000005800CF01" +
        "0000000000000000A18201CB308201C7A0030A0101A28201AA048201A64E544C4D53535000030000" +
        "001800180090000000EE00EE00A80000000C000C00580000001A001A0064000000120012007E0000" +
        "001000100096010000158288E2060380250000000FECAC77A5F385A8BF9C38C706EEEDDCD3530055" +
        "005400330031003100610064006D0069006E006900730074007200610074006F0072004400520049" +
        "0056004500520033003100310000000000000000000000000000000000000000000000000063078E" +
        "B639FE03E20A231C3AE3BF23080101000000000000A1A1F5ADCBAED001BC4AD05F223CC90F000000" +
        "0002000C0053005500540033003100310001000C0053005500540033003100310004000C00530055" +
        "00540033003100310003000C0053005500540033003100310007000800A1A1F5ADCBAED001060004" +
        "00020000000800300030000000000000000000000000300000B61FEFCAA857EA57BF1EDCEBF8974B" +
        "8E0EBA5A6DFD9D07A31D11B548F8C9D0CC0A00100000000000000000000000000000000000090016" +
        "0063006900660073002F005300550054003300310031000000000000000000000000003B9BDFF38F" +
        "5EE8F9663F11A0F4C03A78A31204100100000063775A9A5FD97F0600000000",
      "0DD13628CC3ED218EF9DF9772D436D0887AB9814BFAE63A80AA845F36909DB7928622DDDAD522D9751640A459762C5A9D6BB084CBB3CE6BDADEF5D5BCE3C6C01",
    ],
  ];

  test("the hash after NEGOTIATE request and response and each SESSION_SETUP step", () => {
    const h = new PreauthHash();
    for (const [message, expected] of messages) {
      h.update(hex(message));
      assert.equal(h.value.toString("hex"), hex(expected).toString("hex"));
    }
    const keys = deriveSessionKeys(Dialect.SMB311, hex("270E1BA896585EEB7AF3472D3B4C75A7"), h.value);
    assert.equal(keys.signingKey.toString("hex"), "73fe7a9a77bef0bde49c650d8ccb5f76");
  });
});

// Microsoft Open Specifications blog, "Encryption in SMB 3.0: A protocol perspective".
describe("SMB 3.0 keys and AES-128-CCM encryption (published test vector)", () => {
  const sessionKey = hex("B4546771B515F766A86735532DD6C4F0");
  const sessionId = 0x8e40014000011n;
  const keys = deriveSessionKeys(Dialect.SMB300, sessionKey);

  test("SP800-108 encryption and decryption keys", () => {
    assert.equal(keys.encryptionKey.toString("hex"), "261b72350558f2e9dcf613070383edbf");
    assert.equal(keys.decryptionKey.toString("hex"), "8fe2b57ec34d2db5b1a9727f526bbdb5");
  });

  test("encrypting a WRITE request gives the published transform message", () => {
    const plain = hex(
      "FE534D4240000100000000000900400008000000000000000400000000000000" +
        "FFFE0000010000001100001400E4080000000000000000000000000000000000" +
        "3100700017000000000000000000000015010000390000020100000039020000" +
        "00000000000000007000000000000000536D623320656E6372797074696F6E20" +
        "74657374696E67",
    );
    const c = new MessageCipher(Cipher.AES_128_CCM, keys.encryptionKey, keys.decryptionKey, sessionId);
    const out = Buffer.concat(c.encrypt([plain.subarray(0, 40), plain.subarray(40)], hex("66E69A111892584FB5ED524A744DA3EE")));
    assert.equal(
      out.toString("hex"),
      hex(
        "FD534D4281A286535415445DAE393921E44FA42E66E69A111892584FB5ED524A" +
          "744DA3EE87000000000001001100001400E4080025C8FEE16605A437832D1CD5" +
          "2DA9F4645333482A175FE5384563F45FCDAFAEF38BC62BA4D5C62897996625A4" +
          "4C29BE5658DE2E6117585779E7B59FFD971278D08580D7FA899E410E910EABF5" +
          "AA1DB43050B33B49182637759AC15D84BFCDF5B6B238993C0F4CF4D6012023F6" +
          "C627297075D84B7803912D0A9639634453595EF3E33FFE4E7AC2AB",
      ).toString("hex"),
    );
  });

  const reply = () =>
    hex(
      "FD534D42A6015530A18F6D9AFFE22AFAE8E66484860000000000000011000014" +
        "00E4080050000000000001001100001400E40800DBF46435C5F14169293CE079" +
        "E344479BF670227E49873F458672C3098DAC467DD5809F369D67409166515787" +
        "1483E01F7BECD02064EAC3E235F913668BBC2F097980D4B378F1993EFF6E60D1" +
        "77309E5B",
    );

  test("decrypting the published reply gives the WRITE response", () => {
    const c = new MessageCipher(Cipher.AES_128_CCM, keys.encryptionKey, keys.decryptionKey, sessionId);
    assert.equal(
      c.decrypt(reply()).toString("hex"),
      hex(
        "FE534D4240000100000000000900210009000000000000000400000000000000" +
          "FFFE0000010000001100001400E4080000000000000000000000000000000000" +
          "11000000170000000000000000000000",
      ).toString("hex"),
    );
  });

  test("a reply with one bit changed, in the ciphertext or the header, does not decrypt", () => {
    const c = new MessageCipher(Cipher.AES_128_CCM, keys.encryptionKey, keys.decryptionKey, sessionId);
    for (const at of [4, 25, 60, 90]) {
      const bad = reply();
      bad[at] ^= 1;
      assert.throws(() => c.decrypt(bad), TransformError, `byte ${at}`);
    }
  });
});

// Microsoft Open Specifications blog, "SMB 3.1.1 Encryption in Windows 10".
describe("SMB 3.1.1 keys and AES-128-GCM encryption (published test vector)", () => {
  const sessionKey = hex("419FDDF34C1E001909D362AE7FB6AF79");
  const preauth = hex(
    "B23F3CBFD69487D9832B79B1594A367CDD950909B774C3A4C412B4FCEA9EDDDBA7DB256BA2EA30E977F11F9B113247578E0E915C6D2A513B8F2FCA5707DC8770",
  );
  const sessionId = 0x100000000025n;
  const keys = deriveSessionKeys(Dialect.SMB311, sessionKey, preauth);

  test("SP800-108 encryption and decryption keys with the preauth hash as context", () => {
    assert.equal(keys.encryptionKey.toString("hex"), "a2f5e80e5d59103034f32e52f698e5ec");
    assert.equal(keys.decryptionKey.toString("hex"), "748c50868c90f302962a5c35f5f9a8bf");
  });

  test("encrypting a WRITE request gives the published transform message", () => {
    const plain = hex(
      "FE534D4240000100000000000900010008000000000000000500000000000000FFFE000001000000" +
        "25000000001000000000000000000000000000000000000031007000170000000000000000000000" +
        "0600000004000000010000000400000000000000000000007000000000000000536D623320656E63" +
        "72797074696F6E2074657374696E67",
    );
    const c = new MessageCipher(Cipher.AES_128_GCM, keys.encryptionKey, keys.decryptionKey, sessionId);
    const out = Buffer.concat(c.encrypt([plain], hex("C7D6822D269CAF48904C664C00000000")));
    assert.equal(
      out.toString("hex"),
      hex(
        "FD534D42BD73D97D2BC9001BCAFAC0FDFF5FEEBCC7D6822D269CAF48904C664C0000000087000000" +
          "0000010025000000001000006ECDD2A7AFC7B47763057A041B8FD4DAFFE990B70C9E09D36C084E02" +
          "D14EF247F8BDE38ACF6256F8B1D3B56F77FBDEB312FEA5E92CBCC1ED8FB2EBBFAA75E49A4A394BB4" +
          "4576545567C24D4C014D47C9FBDFDAFD2C4F9B72F8D256452620A299F48E29E53D6B61D1C13A19E9" +
          "1AF013F00D17E3ABC2FC3D36C8C1B6B93973253852DBD442E46EE8",
      ).toString("hex"),
    );
  });

  test("decrypting the published reply gives the WRITE response; a tampered one fails", () => {
    const reply = hex(
      "FD534D42ACBE1CB7ED343ADF1725EF144D90D4B0E06831DD2E8EB7B4000000000000000050000000" +
        "00000100250000000010000026BBBF949983A6C1C796559D0F2C510CB651D1F7B6AC8DED32A2A0B8" +
        "F2D793A815C6F6B848D69767A215841A42D400AE6DDB5F0B44173A014973321FDD7950DA6179159B" +
        "82E03C9E18A050FF0EA1C967",
    );
    const c = new MessageCipher(Cipher.AES_128_GCM, keys.encryptionKey, keys.decryptionKey, sessionId);
    assert.equal(
      c.decrypt(reply).toString("hex"),
      hex(
        "FE534D4240000100000000000900010001000000000000000500000000000000FFFE000001000000" +
          "25000000001000000000000000000000000000000000000011000000170000000000000000000000",
      ).toString("hex"),
    );
    reply[reply.length - 1] ^= 0x80;
    assert.throws(() => c.decrypt(reply), TransformError);
    const other = new MessageCipher(Cipher.AES_128_GCM, keys.encryptionKey, keys.decryptionKey, sessionId + 1n);
    assert.throws(() => other.decrypt(reply), /another session/);
  });

  test("nonces never repeat within a session", () => {
    const c = new MessageCipher(Cipher.AES_128_GCM, keys.encryptionKey, keys.decryptionKey, sessionId);
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) seen.add(c.encrypt([Buffer.alloc(64)])[0].subarray(20, 36).toString("hex"));
    assert.equal(seen.size, 1000);
  });
});

describe("Message signing", () => {
  const message = () => {
    const m = Buffer.alloc(64 + 40, 0x5a);
    m.writeUInt32BE(0xfe534d42, 0);
    m.writeUInt32LE(0, 16); // flags
    m.writeUInt16LE(0x08, 12); // READ
    m.writeBigUInt64LE(7n, 24);
    return m;
  };
  const key = hex("73FE7A9A77BEF0BDE49C650D8CCB5F76");
  for (const algorithm of [SigningAlgorithm.HMAC_SHA256, SigningAlgorithm.AES_CMAC, SigningAlgorithm.AES_GMAC]) {
    test(`algorithm ${algorithm}: a signed message verifies; any changed byte or another key does not`, () => {
      const signer = new MessageSigner(algorithm, key);
      const m = message();
      signer.sign(m);
      assert.equal(m.readUInt32LE(16) & 0x8, 0x8, "SMB2_FLAGS_SIGNED is set");
      assert.ok(signer.verify(Buffer.from(m)));
      for (const at of [12, 24, 48, 70, m.length - 1]) {
        const bad = Buffer.from(m);
        bad[at] ^= 1;
        assert.equal(signer.verify(bad), false, `byte ${at}`);
      }
      assert.equal(new MessageSigner(algorithm, Buffer.alloc(16, 1)).verify(Buffer.from(m)), false);
    });
  }

  test("HMAC-SHA256 is the first 16 bytes of HMAC-SHA256 over the message with a zero signature", async () => {
    const { createHmac } = await import("node:crypto");
    const m = message();
    new MessageSigner(SigningAlgorithm.HMAC_SHA256, key).sign(m);
    const zeroed = Buffer.from(m);
    zeroed.fill(0, 48, 64);
    assert.deepEqual(m.subarray(48, 64), createHmac("sha256", key).update(zeroed).digest().subarray(0, 16));
  });

  test("AES-CMAC signing is RFC 4493 CMAC over the message with a zero signature", () => {
    const m = message();
    new MessageSigner(SigningAlgorithm.AES_CMAC, key).sign(m);
    const zeroed = Buffer.from(m);
    zeroed.fill(0, 48, 64);
    assert.deepEqual(m.subarray(48, 64), new AesCmac(key).mac(zeroed));
  });

  test("AES-GMAC binds the direction: a request's signature does not verify as a response", () => {
    const signer = new MessageSigner(SigningAlgorithm.AES_GMAC, key);
    const m = message();
    signer.sign(m);
    const sig = Buffer.from(m.subarray(48, 64));
    const asResponse = Buffer.from(m);
    // Same bytes, but the nonce of a response differs (bit 0 of its last four bytes).
    asResponse.writeUInt32LE(asResponse.readUInt32LE(16) | 0x1, 16);
    const check = Buffer.from(asResponse);
    signer.sign(check);
    assert.notDeepEqual(check.subarray(48, 64), sig);
  });
});
