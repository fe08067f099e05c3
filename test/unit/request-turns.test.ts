import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { requestsPerTurn } from "../../server/http/request-turns";

/** Burns `ms` of this thread's time, as a request's synchronous work does. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe("requests started a few per turn (real HTTP server and sockets)", () => {
  it("a connection made while hundreds of requests wait is accepted after a few of them, not after all", async () => {
    const started: string[] = [];
    let acceptedAfter = -1;
    const handler = requestsPerTurn((req, res) => {
      started.push(req.url ?? "");
      busy(1);
      res.end("ok");
    });
    const queued = 200;
    let arrived = 0;
    let late: net.Socket | null = null;
    const server = http.createServer((req, res) => {
      handler(req, res);
      // Every request of the backlog has arrived: a new client connects now.
      if (++arrived === queued) late = net.connect((server.address() as AddressInfo).port, "127.0.0.1");
    });
    server.on("connection", () => {
      if (late && acceptedAfter < 0) acceptedAfter = started.length;
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      // 20 keep-alive clients with 10 requests each in flight (pipelined): 200 requests of 1 ms waiting at once.
      const clients = await Promise.all(
        Array.from({ length: 20 }, (_, c) => {
          return new Promise<string>((resolve, reject) => {
            const socket = net.connect(port, "127.0.0.1", () => {
              socket.write(Array.from({ length: 10 }, (_, r) => `GET /${c}-${r} HTTP/1.1\r\nHost: x\r\n\r\n`).join(""));
            });
            let text = "";
            socket.on("data", (chunk) => {
              text += chunk;
              if (text.split("\r\n\r\nok").length - 1 === 10) {
                socket.destroy();
                resolve(text);
              }
            });
            socket.on("error", reject);
          });
        }),
      );
      assert.equal(clients.length, 20);
      assert.equal(started.length, queued);
      assert.ok(acceptedAfter >= 0, "the late connection was accepted");
      assert.ok(acceptedAfter < queued / 4, `the late connection was accepted after ${acceptedAfter} of ${queued} waiting requests had started`);
      // Arrival order is kept: each client's requests start in the order it sent them.
      for (let c = 0; c < 20; c++) {
        const own = started.filter((url) => url.startsWith(`/${c}-`));
        assert.deepEqual(own, Array.from({ length: 10 }, (_, r) => `/${c}-${r}`));
      }
    } finally {
      (late as net.Socket | null)?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("starts at most its count of requests per turn, in arrival order", async () => {
    const turns: number[][] = [[]];
    const handler = requestsPerTurn((req) => void turns.at(-1)!.push(Number(req.url)), 2);
    for (let i = 0; i < 5; i++) handler({ url: String(i) } as http.IncomingMessage, {} as http.ServerResponse);
    assert.deepEqual(turns, [[]], "nothing starts in the turn the requests arrived in");
    while (turns.flat().length < 5) {
      await new Promise((resolve) => setImmediate(resolve));
      turns.push([]);
    }
    assert.deepEqual(
      turns.filter((t) => t.length > 0),
      [[0, 1], [2, 3], [4]],
    );
  });
});
