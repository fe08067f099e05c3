import assert from "node:assert/strict";
import { test } from "node:test";
import type { Request } from "express";
import { canChangeSettings } from "../../server/http/instance.routes";

const from = (remoteAddress: string | undefined) => ({ socket: { remoteAddress } }) as unknown as Request;

test("only a loopback peer of a desktop (SQLite) server may change the instance's settings", () => {
  for (const address of ["127.0.0.1", "::1", "::ffff:127.0.0.1", "127.0.0.2"]) assert.equal(canChangeSettings(from(address), false), true, address);
  for (const address of ["192.168.1.20", "10.0.0.5", "::ffff:192.168.1.20", "fe80::1", undefined]) assert.equal(canChangeSettings(from(address), false), false, String(address));
  // A team server's administrator is elsewhere, even for a request from its own machine (a reverse proxy, for one).
  assert.equal(canChangeSettings(from("127.0.0.1"), true), false);
});
