import type { Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Express } from "express";
import http from "node:http";
import https from "node:https";
import { createApp } from "./app";
import type { Config } from "./config";
import type { Logger } from "./logger";
import { composeApi } from "./composition/compose";
import { requestTurns } from "./http/request-turns";
import { isLanBinding } from "./net/local-addresses";
import { readTlsCredentials, type TlsCredentials } from "./tls/tls-credentials";

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
  // Before any storage opens: a bad TLS_CERT or TLS_KEY stops the start with one sentence (a ConfigError).
  const tls = config.tls ? readTlsCredentials(config.tls) : null;
  reportTransport(config, tls, logger);
  const composition = await composeApi(config, logger);
  let serving: { server: Server; sockets: Set<Socket> } | null = null;
  const close = () =>
    composition.close(async () => {
      if (serving) await closeHttp(serving.server, serving.sockets);
    });
  try {
    // Listen first: with PORT=0 the address (and so the OAuth redirect URI) is only known then.
    const server = await listen(config.port, config.host, tls);
    const sockets = new Set<Socket>();
    serving = { server, sockets };
    const port = (server.address() as AddressInfo).port;
    const url = `${tls ? "https" : "http"}://${config.host}:${port}`;
    composition.listening(url);
    const { storage, ingestion, mode, models, attemptStore, redis } = composition;
    const app = await createApp({ ...storage, config, mode, publicUrl: config.publicUrl ?? url, tls: tls?.certificate ?? null, logger, kinds: ingestion.kinds, queue: ingestion.queue, models, attemptStore, redis });
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

/** What the log says of how browsers reach this server: the certificate's fingerprint to compare, or that the LAN gets plain HTTP. */
function reportTransport(config: Config, tls: TlsCredentials | null, logger: Logger): void {
  if (tls) {
    const { fingerprintSha256, notAfter } = tls.certificate;
    logger.info(`serving HTTPS with the certificate in TLS_CERT; its SHA-256 fingerprint is ${fingerprintSha256} (valid until ${notAfter.toISOString()})`);
    if (notAfter.getTime() <= Date.now()) logger.warn(`the certificate in TLS_CERT expired on ${notAfter.toISOString()}: browsers refuse it; renew it and restart`);
    if (tls.keyOpenToOthers) logger.warn(`TLS_KEY (${config.tls?.keyFile}) can be read by other users of this machine: make it readable by this user only (chmod 600)`);
  } else if (isLanBinding(config.host)) {
    logger.warn(`HOST=${config.host} serves plain HTTP to the LAN: passwords, tokens and the session cookie cross the network readable; set TLS_CERT and TLS_KEY, or end TLS in a proxy in front (with TRUST_PROXY)`);
  }
}

/**
 * How long an idle keep-alive connection stays open. Longer than a client keeps one idle (undici:
 * the advertised timeout less 2 s; browsers retry a request the server closed under them), so
 * the client, not the server, closes it: with Node's default 5 s, a client reusing a connection
 * just as the server dropped it got "fetch failed" on a busy machine (docs/decisions/0530-keep-alive-longer-than-clients.md).
 */
const KEEP_ALIVE_MS = 65_000;

/** Plain HTTP, or HTTPS with TLS_CERT/TLS_KEY: the same request handling on either (http/request-turns.ts). */
function listen(port: number, host: string, tls: TlsCredentials | null): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server: Server = tls ? https.createServer({ cert: tls.cert, key: tls.key }) : http.createServer();
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
