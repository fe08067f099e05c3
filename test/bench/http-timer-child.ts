import http from "node:http";
import { createInterface } from "node:readline";

// The timing client of http-timer.ts: one request per line of stdin ({ path, token }), one answer per line of stdout.

const base = new URL(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function timedGet(pathAndQuery: string, token: string | undefined): Promise<{ status: number; body: Buffer; ms: number }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const request = http.get({ host: base.hostname, port: base.port, path: pathAndQuery, agent, headers: token ? { authorization: `Bearer ${token}` } : {} }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks), ms: performance.now() - start }));
      response.on("error", reject);
    });
    request.on("error", reject);
  });
}

const lines = createInterface({ input: process.stdin });
// One request at a time, in order: the bench waits for each answer before it asks the next.
let queue = Promise.resolve();
lines.on("line", (line) => {
  const { path, token } = JSON.parse(line) as { path: string; token?: string };
  queue = queue.then(async () => {
    try {
      const { status, body, ms } = await timedGet(`${base.pathname.replace(/\/$/, "")}${path}`, token);
      let results = 0;
      try {
        results = (JSON.parse(body.toString("utf8")) as { results?: unknown[] }).results?.length ?? 0;
      } catch {
        // not JSON: no results to count
      }
      process.stdout.write(`${JSON.stringify({ status, results, ms })}\n`);
    } catch (error) {
      process.stdout.write(`${JSON.stringify({ error: (error as Error).message })}\n`);
    }
  });
});
lines.on("close", () => void queue.then(() => agent.destroy()));
