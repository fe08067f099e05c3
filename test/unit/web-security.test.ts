import assert from "node:assert/strict";
import type os from "node:os";
import { describe, it } from "node:test";
import { crossSiteRefusal, type RequestFacts } from "../../server/http/cross-site.middleware";
import { AllowedHosts, hostnameOf } from "../../server/http/host-guard.middleware";
import { isLoopbackAddress, isThisMachineOnlyHost, machineHostnames } from "../../server/net/local-addresses";
import { CONTENT_SECURITY_POLICY } from "../../server/http/security-headers";
import { bearerToken } from "../../server/routing/bearer-token";

const INTERFACES: NodeJS.Dict<os.NetworkInterfaceInfo[]> = {
  lo: [
    { address: "127.0.0.1", family: "IPv4", internal: true, netmask: "255.0.0.0", mac: "00:00:00:00:00:00", cidr: "127.0.0.1/8" },
    { address: "::1", family: "IPv6", internal: true, netmask: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", mac: "00:00:00:00:00:00", cidr: "::1/128", scopeid: 0 },
  ],
  eth0: [
    { address: "192.0.2.10", family: "IPv4", internal: false, netmask: "255.255.255.0", mac: "02:00:00:00:00:01", cidr: "192.0.2.10/24" },
    { address: "fe80::1%eth0", family: "IPv6", internal: false, netmask: "ffff::", mac: "02:00:00:00:00:01", cidr: null, scopeid: 2 },
  ],
};

describe("local addresses", () => {
  it("knows loopback addresses, IPv4-mapped and bracketed ones included", () => {
    for (const a of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1"]) assert.equal(isLoopbackAddress(a), true, a);
    for (const a of [undefined, "", "192.0.2.10", "::ffff:192.0.2.10", "::", "0.0.0.0", "localhost", "128.0.0.1", "::2"]) assert.equal(isLoopbackAddress(a), false, String(a));
  });

  it("tells hosts that only reach this machine", () => {
    for (const h of ["localhost", "127.0.0.1", "[::1]", "0.0.0.0", "[::]"]) assert.equal(isThisMachineOnlyHost(h), true, h);
    for (const h of ["sluice.example", "192.0.2.10", "localhost.evil.example"]) assert.equal(isThisMachineOnlyHost(h), false, h);
  });

  it("lists the machine's names and addresses as a Host header carries them", () => {
    assert.deepEqual(machineHostnames(INTERFACES, "Box.corp.example").sort(), ["127.0.0.1", "192.0.2.10", "[::1]", "[fe80::1]", "box", "box.corp.example", "box.local"].sort());
  });
});

describe("Host header check (DNS rebinding)", () => {
  const fixed = { interfaces: () => INTERFACES, hostname: () => "box" };

  it("parses the host of a Host header, refusing anything that is not one", () => {
    assert.equal(hostnameOf("127.0.0.1:8420"), "127.0.0.1");
    assert.equal(hostnameOf("[::1]:8420"), "[::1]");
    assert.equal(hostnameOf("LocalHost.:8420"), "localhost");
    for (const bad of ["evil.example/x", "a@127.0.0.1", "127.0.0.1 x", "[::1", "127.0.0.1:99999"]) assert.equal(hostnameOf(bad), null, bad);
  });

  it("bound to loopback: localhost, 127.0.0.1, [::1] and the PUBLIC_URL host, any port", () => {
    const hosts = new AllowedHosts({ bindHost: "127.0.0.1", publicUrl: "https://sluice.example.lan", ...fixed });
    for (const h of ["127.0.0.1:8420", "localhost:8420", "localhost", "[::1]:8420", "sluice.example.lan", "SLUICE.example.lan:443", undefined])
      assert.equal(hosts.allows(h), true, String(h));
    for (const h of ["evil.example:8420", "192.0.2.10:8420", "box:8420", "127.0.0.1.evil.example", "localhost.evil.example:8420", "sluice.example.lan.evil.example"])
      assert.equal(hosts.allows(h), false, h);
  });

  it("the listening address is the public one when PUBLIC_URL is unset (desktop LAN mode: 0.0.0.0)", () => {
    const hosts = new AllowedHosts({ bindHost: "127.0.0.1", publicUrl: "http://127.0.0.1:8420", ...fixed });
    assert.equal(hosts.allows("127.0.0.1:8420"), true);
    assert.equal(hosts.allows("sluice.example.lan"), false);
  });

  it("in LAN mode also the machine's own addresses and names, read again when they change", () => {
    let interfaces = INTERFACES;
    let now = 0;
    const hosts = new AllowedHosts({ bindHost: "0.0.0.0", publicUrl: "http://0.0.0.0:8420", interfaces: () => interfaces, hostname: () => "box", now: () => now });
    for (const h of ["192.0.2.10:8420", "box:8420", "box.local:8420", "[fe80::1]:8420", "0.0.0.0:8420", "localhost:8420"]) assert.equal(hosts.allows(h), true, h);
    for (const h of ["evil.example:8420", "198.51.100.7:8420", "box.evil.example"]) assert.equal(hosts.allows(h), false, h);
    // A new address (DHCP) is picked up on a miss, at most every few seconds.
    interfaces = { ...INTERFACES, wlan0: [{ address: "198.51.100.7", family: "IPv4", internal: false, netmask: "255.255.255.0", mac: "02:00:00:00:00:02", cidr: null }] };
    assert.equal(hosts.allows("198.51.100.7:8420"), false);
    now += 10_000;
    assert.equal(hosts.allows("198.51.100.7:8420"), true);
  });
});

describe("bearer token", () => {
  const of = (authorization: string | undefined) => bearerToken({ headers: { authorization } });

  it("reads the token of a well-formed Bearer header, whatever the scheme's case", () => {
    assert.equal(of("Bearer sluice_key_abc"), "sluice_key_abc");
    assert.equal(of("bearer  tok.en-1 "), "tok.en-1");
  });

  it("gives no token for no header, another scheme, no token or two words", () => {
    for (const header of [undefined, "", "Basic dXNlcjpwdw==", "Bearer", "Bearer ", "Bearer a b", "Bearertoken"]) {
      assert.equal(of(header), null, JSON.stringify(header));
    }
  });
});

describe("cross-site request check", () => {
  const PUBLIC = "http://127.0.0.1:8420";
  const post = (facts: Partial<RequestFacts>): RequestFacts => ({ method: "POST", host: "127.0.0.1:8420", protocol: "http", origin: undefined, secFetchSite: undefined, bearer: null, ...facts });

  it("lets the app's own pages, safe methods, bearer clients and non-browsers through", () => {
    assert.equal(crossSiteRefusal(post({ origin: "http://127.0.0.1:8420" }), PUBLIC), null);
    assert.equal(crossSiteRefusal(post({ origin: "http://localhost:8420", host: "localhost:8420" }), PUBLIC), null, "the origin the request was addressed to");
    assert.equal(crossSiteRefusal(post({ origin: "https://sluice.example.lan", host: "sluice.example.lan" }), "https://sluice.example.lan"), null, "behind a TLS proxy");
    assert.equal(
      crossSiteRefusal(post({ origin: "https://192.0.2.10:8420", host: "192.0.2.10:8420", protocol: "https" }), "https://0.0.0.0:8420"),
      null,
      "a LAN page of a server that speaks HTTPS itself (TLS_CERT): the origin the request was addressed to, with its scheme",
    );
    assert.equal(crossSiteRefusal(post({ origin: "http://evil.example", method: "GET" }), PUBLIC), null);
    assert.equal(crossSiteRefusal(post({ origin: "http://evil.example", bearer: "x" }), PUBLIC), null);
    assert.equal(crossSiteRefusal(post({}), PUBLIC), null, "curl sends neither Origin nor Sec-Fetch-Site");
    assert.equal(crossSiteRefusal(post({ secFetchSite: "same-origin" }), PUBLIC), null);
    assert.equal(crossSiteRefusal(post({ secFetchSite: "none" }), PUBLIC), null);
  });

  it("refuses other sites, other ports of this host, opaque origins and cross-site fetch metadata", () => {
    for (const facts of [
      post({ origin: "http://evil.example" }),
      post({ origin: "http://127.0.0.1:3000" }),
      post({ origin: "https://127.0.0.1:8420" }),
      // A plain-HTTP page is another origin than the HTTPS server it posts to.
      post({ origin: "http://192.0.2.10:8420", host: "192.0.2.10:8420", protocol: "https" }),
      post({ origin: "null" }),
      post({ origin: "garbage" }),
      post({ method: "DELETE", origin: "http://evil.example" }),
      post({ secFetchSite: "cross-site" }),
      post({ secFetchSite: "same-site" }),
    ]) {
      const refusal = crossSiteRefusal(facts, PUBLIC);
      assert.match(refusal ?? "", /^Cross-site request refused/, JSON.stringify(facts));
    }
  });
});

describe("Content-Security-Policy", () => {
  it("allows no inline script or style and no framing", () => {
    const directives = new Map(CONTENT_SECURITY_POLICY.split(";").map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
    assert.deepEqual(directives.get("script-src"), ["'self'"]);
    assert.deepEqual(directives.get("style-src"), ["'self'"]);
    assert.deepEqual(directives.get("frame-ancestors"), ["'none'"]);
    assert.deepEqual(directives.get("object-src"), ["'none'"]);
    assert.ok(!CONTENT_SECURITY_POLICY.includes("unsafe"), CONTENT_SECURITY_POLICY);
  });
});
