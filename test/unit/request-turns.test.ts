import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { requestTurns } from "../../server/http/request-turns";

/** Burns `ms` of this thread's time, as a request's work does. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

const request = (url: string) => ({ url }) as http.IncomingMessage;
const response = {} as http.ServerResponse;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("requests started by turns of the event loop", () => {
  it("a turn without a new connection starts every waiting request; one that accepted a connection starts a few", async () => {
    const turns: string[][] = [[]];
    const gate = requestTurns((req) => void turns.at(-1)!.push(req.url ?? ""), 2);
    for (let i = 0; i < 6; i++) gate.request(request(`a${i}`), response);
    gate.connection();
    assert.deepEqual(turns, [[]], "nothing starts in the turn the requests arrived in");
    await nextTurn();
    turns.push([]);
    gate.connection();
    await nextTurn();
    turns.push([]);
    await nextTurn();
    assert.deepEqual(turns, [["a0", "a1"], ["a2", "a3"], ["a4", "a5"]]);
  });

  it("a burst of connections to a server busy with keep-alive clients is accepted a few requests apart (real HTTP server and sockets)", async () => {
    let started = 0;
    const acceptedAt: number[] = [];
    let burstStarted = false;
    const gate = requestTurns((_req, res) => {
      started++;
      busy(0.5);
      res.end("ok");
    });
    const server = http.createServer(gate.request);
    server.on("connection", () => {
      gate.connection();
      if (burstStarted) acceptedAt.push(started);
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
    let running = true;
    // 20 keep-alive clients, each asking again as soon as it is answered: 20 requests always waiting.
    const clients = Array.from({ length: 20 }, async () => {
      while (running) {
        await new Promise<void>((resolve, reject) => {
          http.get({ host: "127.0.0.1", port, path: "/", agent }, (res) => res.resume().on("end", resolve)).on("error", reject);
        });
      }
    });
    try {
      while (started < 200) await new Promise((r) => setTimeout(r, 5));
      burstStarted = true;
      const startedBefore = started;
      const burst = Array.from({ length: 40 }, () => net.connect(port, "127.0.0.1"));
      while (acceptedAt.length < 40) await new Promise((r) => setTimeout(r, 5));
      for (const socket of burst) socket.destroy();
      // Without the short turns each accept waits for a turn of ~20 requests: 800 requests for the burst.
      const spent = acceptedAt[39] - startedBefore;
      assert.ok(spent < 200, `40 connections were accepted while ${spent} requests started`);
    } finally {
      running = false;
      await Promise.all(clients);
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
