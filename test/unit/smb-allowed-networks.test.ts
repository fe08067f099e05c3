import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConnectorUnreachableError } from "../../server/connectors/connector";
import { SmbAddressNotAllowedError, SmbAllowedNetworks } from "../../server/connectors/smb/smb-allowed-networks";
import { parseNetworkEntry } from "../../server/net/network-entry";

describe("SMB_ALLOWED_NETWORKS matching", () => {
  const office = new SmbAllowedNetworks(["192.168.10.0/24", "10.0.0.5/32", "fd00::/8"].map(parseNetworkEntry));

  it("allows addresses inside a listed network and nothing else", () => {
    for (const address of ["192.168.10.0", "192.168.10.77", "192.168.10.255", "10.0.0.5", "fd12:3456::1", "::ffff:192.168.10.9"]) {
      assert.equal(office.allows(address), true, address);
    }
    for (const address of ["192.168.11.1", "192.168.9.255", "10.0.0.4", "10.0.0.6", "127.0.0.1", "::1", "fe80::1", "::ffff:10.0.0.6", "8.8.8.8", "not-an-ip", ""]) {
      assert.equal(office.allows(address), false, address);
    }
  });

  it("unset allows any address and dials the host as given", async () => {
    const any = new SmbAllowedNetworks(null);
    assert.equal(any.allows("8.8.8.8"), true);
    assert.equal(await any.addressFor("files.example.invalid"), "files.example.invalid");
  });

  it("checks the address a name resolves to, and dials that address", async () => {
    const loopback = new SmbAllowedNetworks(["127.0.0.0/8"]);
    assert.equal(await loopback.addressFor("localhost"), "127.0.0.1");
    assert.equal(await loopback.addressFor("127.0.0.2"), "127.0.0.2");
    await assert.rejects(new SmbAllowedNetworks(["192.168.10.0/24"]).addressFor("localhost"), SmbAddressNotAllowedError);
    await assert.rejects(new SmbAllowedNetworks(["192.168.10.0/24"]).addressFor("127.0.0.1"), /outside the networks Sluice may connect to \(SMB_ALLOWED_NETWORKS\)/);
    await assert.rejects(loopback.addressFor("no-such-host.invalid"), ConnectorUnreachableError);
  });

  it("parses addresses and networks to address/prefix, and says what is wrong with a bad one", () => {
    assert.equal(parseNetworkEntry("10.1.0.0/16"), "10.1.0.0/16");
    assert.equal(parseNetworkEntry("10.1.2.3"), "10.1.2.3/32");
    assert.equal(parseNetworkEntry("0.0.0.0/0"), "0.0.0.0/0");
    assert.equal(parseNetworkEntry("2001:db8::/32"), "2001:db8::/32");
    assert.equal(parseNetworkEntry("2001:db8::1"), "2001:db8::1/128");
    assert.equal(parseNetworkEntry("10.0.0.0/08"), "10.0.0.0/8");
    for (const bad of ["10.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0.0/", "10.0.0.0/8/8", "10.0.0", "host.lan", "10.0.0.0/x", "/8"]) {
      assert.throws(() => parseNetworkEntry(bad), new RegExp(`"${bad.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}"`), bad);
    }
  });
});
