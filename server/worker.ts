import { composeWorker } from "./composition/compose";
import { runUntilSignal } from "./composition/run-until-signal";

/** `npm run worker`: takes ingestion jobs from the team queue (REDIS_URL); no HTTP server. Stops cleanly on SIGINT/SIGTERM. */
runUntilSignal({
  stopping: "stopping the worker",
  failure: "worker failed to start",
  start: async (config, logger) => {
    const worker = await composeWorker(config, logger);
    try {
      await worker.start();
    } catch (error) {
      await worker.close().catch(() => undefined);
      throw error;
    }
    // The running job stops between files and is recorded failed, as in the API process.
    return { readyLine: "worker ready", close: () => worker.close() };
  },
});
