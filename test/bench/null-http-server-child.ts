import http from "node:http";

// The machine's own HTTP floor for `--search-corpora` (null-http-server.ts): a bare node:http server
// that answers every request at once with the same JSON body, as big as a search's answer, and
// does nothing else. Prints its port on stdout once it listens.

const bytes = Number(process.argv[2] ?? 4096);
const body = Buffer.from(JSON.stringify({ results: [], padding: "x".repeat(Math.max(0, bytes - 30)) }));
const server = http.createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": body.length, "cache-control": "no-store" });
  res.end(body);
});
// No idle limit at all: the timing client's one keep-alive connection waits out the bench's settles and idles and must never be closed under it (0530).
server.keepAliveTimeout = 0;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`${typeof address === "object" && address ? address.port : 0}\n`);
});
