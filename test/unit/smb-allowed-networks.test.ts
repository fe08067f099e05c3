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

describe("SMB destinations on a LAN server (HOST not loopback)", () => {
  const lan = new SmbAllowedNetworks(null, { lan: true });

  it("refuses loopback, link-local, 0.0.0.0/8, multicast and broadcast (IPv4, IPv6, IPv4-mapped), allows the rest", () => {
    for (const address of ["127.0.0.1", "127.8.9.10", "0.0.0.0", "0.1.2.3", "169.254.169.254", "169.254.0.1", "224.0.0.251", "239.255.255.250", "255.255.255.255", "::1", "::", "::127.0.0.1", "fe80::1", "febf::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:169.254.169.254", "not-an-ip"]) {
      assert.equal(lan.allows(address), false, address);
    }
    for (const address of ["192.168.1.10", "10.0.0.5", "172.16.0.1", "8.8.8.8", "fd00::5", "2001:db8::1", "::ffff:192.168.1.10"]) {
      assert.equal(lan.allows(address), true, address);
    }
  });

  it("dials only 445 and 139 by default; SMB_ALLOWED_PORTS replaces them (and applies on the desktop too)", async () => {
    assert.equal(lan.allowsPort(445), true);
    assert.equal(lan.allowsPort(139), true);
    for (const port of [80, 8080, 22, 10445]) assert.equal(lan.allowsPort(port), false, String(port));
    await assert.rejects(lan.addressFor("192.168.1.10", 8080), /Port 8080 is not one Sluice may connect to for SMB \(SMB_ALLOWED_PORTS\); ask the administrator/);
    assert.equal(await lan.addressFor("192.168.1.10", 445), "192.168.1.10");
    const custom = new SmbAllowedNetworks(null, { lan: true, ports: [10445] });
    assert.equal(custom.allowsPort(10445), true);
    assert.equal(custom.allowsPort(445), false);
    const desktop = new SmbAllowedNetworks(null, { ports: [445] });
    assert.equal(desktop.allowsPort(8080), false);
    assert.equal(desktop.allows("127.0.0.1"), true, "the desktop keeps loopback");
    const open = new SmbAllowedNetworks(null);
    assert.equal(open.restricted, false);
    assert.equal(open.allowsPort(8080), true);
  });

  it("checks every address a name resolves to: a name that resolves to loopback is refused, with the same words as an address", async () => {
    const byName = await lan.addressFor("localhost", 445).catch((e: Error) => e);
    const byAddress = await lan.addressFor("127.0.0.1", 445).catch((e: Error) => e);
    assert.ok(byName instanceof SmbAddressNotAllowedError && byAddress instanceof SmbAddressNotAllowedError);
    assert.equal(byName.message.replace("localhost", "HOST"), byAddress.message.replace("127.0.0.1", "HOST"));
    await assert.rejects(lan.addressFor("[::1]", 445), SmbAddressNotAllowedError);
    await assert.rejects(lan.addressFor("169.254.169.254", 445), /outside the networks Sluice may connect to \(SMB_ALLOWED_NETWORKS\)/);
  });

  it("SMB_ALLOWED_NETWORKS decides alone when set: listing loopback allows it on a LAN server", async () => {
    const listed = new SmbAllowedNetworks(["127.0.0.0/8"], { lan: true });
    assert.equal(await listed.addressFor("127.0.0.1", 445), "127.0.0.1");
    assert.equal(listed.allows("169.254.169.254"), false);
  });

  it("checks the address the socket reached (checkPeer), only when anything is restricted", () => {
    assert.throws(() => lan.checkPeer("files", "127.0.0.1"), SmbAddressNotAllowedError);
    assert.throws(() => lan.checkPeer("files", undefined), SmbAddressNotAllowedError);
    lan.checkPeer("files", "192.168.1.10");
    new SmbAllowedNetworks(null).checkPeer("files", "127.0.0.1");
  });

  it("crosses threads as plain rules", () => {
    const again = SmbAllowedNetworks.fromRules(JSON.parse(JSON.stringify(new SmbAllowedNetworks(["10.0.0.0/8"], { lan: true, ports: [445] }).rules)));
    assert.deepEqual(again.rules, { networks: ["10.0.0.0/8"], ports: [445], lan: true });
    assert.equal(again.allows("10.1.2.3"), true);
    assert.equal(again.allowsPort(139), false);
  });
});
