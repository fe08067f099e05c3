import type { Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Express } from "express";
import http from "node:http";
import { createApp } from "./app";
import { openStorage } from "./storage";
import type { Config } from "./config";
import { openIngestion } from "./ingestion";
import type { Logger } from "./logger";
import { ModelsService } from "./llm/models.service";
import { modelsOptions } from "./llm/models.options";
import { openRedis } from "./redis/redis-connection";
import { RedisAttemptStore } from "./accounts/redis-attempt-store";
import { SharedPulls } from "./llm/shared-pulls";
import { acquireInstanceLock } from "./instance-lock";
import { requestTurns } from "./http/request-turns";

export interface RunningServer {
  url: string;
  port: number;
  /** The Express app it serves (test/integration/openapi.test.ts walks its routes). */
  app: Express;
  /** Stops taking requests, fails the running job durably, closes indexes and the database. */
  close(): Promise<void>;
}

/** Opens storage and secrets, builds the app, listens and starts the job queue: shared by `npm start` and the Electron shell. */
export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  // One server per DATA_DIR on the desktop (one job at a time); team mode (REDIS_URL) shares storage on purpose.
  const lock = config.redisUrl ? null : acquireInstanceLock(config.dataDir);
  try {
    const running = await serve(config, logger);
    lock?.setUrl(running.url);
    return {
      ...running,
      close: async () => {
        try {
          await running.close();
        } finally {
          lock?.release();
        }
      },
    };
  } catch (error) {
    lock?.release();
    throw error;
  }
}

async function serve(config: Config, logger: Logger): Promise<RunningServer> {
  const storage = await openStorage(config, logger);
  const { db, index, secrets } = storage;
  // Team mode (REDIS_URL): one connection for the queue, pull locks and sign-in counts.
  const redis = config.redisUrl ? openRedis({ redisUrl: config.redisUrl, redisSentinels: config.redisSentinels }, logger) : null;
  const ingestion = openIngestion(config, storage, logger, config.runWorker, redis);
  const { kinds, queue } = ingestion;
  // Listen first: with PORT=0 the address (and so the OAuth redirect URI) is only known then.
  const server = await listen(config.port, config.host);
  const port = (server.address() as AddressInfo).port;
  const url = `http://${config.host}:${port}`;
  const sharedPulls = redis ? SharedPulls.open(redis, config.redisPrefix, db, logger) : undefined;
  const models = new ModelsService(db, modelsOptions(config), logger, sharedPulls);
  const attemptStore = redis ? new RedisAttemptStore(redis, config.redisPrefix) : undefined;
  const app = await createApp({ config, publicUrl: config.publicUrl ?? url, db, secrets, logger, index, vectors: storage.vectors, kinds, queue, models, attemptStore, redis });
  // New connections are taken between short turns while they keep coming (http/request-turns.ts).
  const turns = requestTurns(app);
  server.on("request", turns.request);
  server.on("connection", turns.connection);
  await queue.start();
  ingestion.scheduler.start();

  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return {
    url,
    port,
    app,
    close: async () => {
      await ingestion.close();
      // Ends every POST /models stream with an error event, so the HTTP server can close.
      await models.close();
      await sharedPulls?.close();
      await closeHttp(server, sockets);
      await redis?.quit();
      await index.close();
      await storage.vectors.close();
      if (db.isInitialized) await db.destroy();
    },
  };
}

function listen(port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = http.createServer();
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
