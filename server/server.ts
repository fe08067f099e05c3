import type { Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Express } from "express";
import http from "node:http";
import { createApp } from "./app";
import type { Config } from "./config";
import type { Logger } from "./logger";
import { composeApi } from "./composition/compose";
import { requestTurns } from "./http/request-turns";

export interface RunningServer {
  url: string;
  port: number;
  /** The Express app it serves (test/integration/openapi.test.ts walks its routes). */
  app: Express;
  /** Stops taking requests, fails the running job durably, closes indexes and the database. */
  close(): Promise<void>;
}

/** Builds the process from the composition root, listens, and starts the job queue: shared by `npm start` and the Electron shell. */
export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  const composition = await composeApi(config, logger);
  let serving: { server: Server; sockets: Set<Socket> } | null = null;
  const close = () =>
    composition.close(async () => {
      if (serving) await closeHttp(serving.server, serving.sockets);
    });
  try {
    // Listen first: with PORT=0 the address (and so the OAuth redirect URI) is only known then.
    const server = await listen(config.port, config.host);
    const sockets = new Set<Socket>();
    serving = { server, sockets };
    const port = (server.address() as AddressInfo).port;
    const url = `http://${config.host}:${port}`;
    composition.listening(url);
    const { storage, ingestion, mode, models, attemptStore, redis } = composition;
    const app = await createApp({ ...storage, config, mode, publicUrl: config.publicUrl ?? url, logger, kinds: ingestion.kinds, queue: ingestion.queue, models, attemptStore, redis });
    // New connections are taken between short turns while they keep coming (http/request-turns.ts).
    const turns = requestTurns(app);
    server.on("request", turns.request);
    server.on("connection", turns.connection);
    await composition.start();
    server.on("connection", (socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    return { url, port, app, close };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}

/**
 * How long an idle keep-alive connection stays open. Longer than a client keeps one idle (undici:
 * the advertised timeout less 2 s; browsers retry a request the server closed under them), so
 * the client, not the server, closes it: with Node's default 5 s, a client reusing a connection
 * just as the server dropped it got "fetch failed" on a busy machine (docs/decisions/0530-keep-alive-longer-than-clients.md).
 */
const KEEP_ALIVE_MS = 65_000;

function listen(port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = http.createServer();
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    server.listen(port, host);
    server.once("listening", () => resolve(server));
    server.once("error", reject);
  });
}

async function closeHttp(server: Server, sockets: Set<Socket>): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // Give in-flight requests a moment, then drop what is left so shutdown never hangs.
  const grace = setTimeout(() => {
    for (const s of sockets) s.destroy();
  }, 3000);
  await closed;
  clearTimeout(grace);
}
