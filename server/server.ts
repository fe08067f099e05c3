import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Socket } from "node:net";
import type { Express } from "express";
import type { DataSource } from "typeorm";
import { createApp } from "./app";
import type { Config } from "./config";
import { openDatabase } from "./data/data-source";
import type { Logger } from "./logger";
import { openSecretStore } from "./secrets/secrets";

export interface RunningServer {
  url: string;
  port: number;
  /** Stops taking requests, finishes or drops open ones, closes the database. */
  close(): Promise<void>;
}

/** Opens storage and secrets, builds the app and listens: shared by `npm start` and the Electron shell. */
export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  const secrets = await openSecretStore({
    dataDir: config.dataDir,
    logger,
    preferKeychain: config.secretsBackend === "auto",
  });
  const db = await openDatabase(config.dataDir);
  const app = await createApp({ config, db, secrets, logger });
  const server = await listen(app, config.port, config.host);
  const port = (server.address() as AddressInfo).port;
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return {
    url: `http://${config.host}:${port}`,
    port,
    close: () => shutdown(server, sockets, db),
  };
}

function listen(app: Express, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once("listening", () => resolve(server));
    server.once("error", reject);
  });
}

async function shutdown(server: Server, sockets: Set<Socket>, db: DataSource): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // Give in-flight requests a moment, then drop what is left so shutdown never hangs.
  const grace = setTimeout(() => sockets.forEach((s) => s.destroy()), 3000);
  await closed;
  clearTimeout(grace);
  if (db.isInitialized) await db.destroy();
}
