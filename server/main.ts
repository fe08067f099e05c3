import { runUntilSignal } from "./composition/run-until-signal";
import { startServer } from "./server";

/** `npm start` (and the Electron shell's forked server): serve the API (and UI) headless until SIGINT/SIGTERM. */
runUntilSignal({
  stopping: "shutting down",
  failure: "failed to start",
  heapTrace: "main",
  start: async (config, logger) => {
    const server = await startServer(config, logger);
    return { readyLine: `listening on ${server.url}`, close: () => server.close() };
  },
});
