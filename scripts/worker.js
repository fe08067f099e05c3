// `npm run worker`: build if needed, then take ingestion jobs from the team queue (REDIS_URL) in this process.
const path = require("node:path");
require("./build-if-needed").buildIfNeeded();
require(path.resolve(__dirname, "..", "dist", "server", "worker.js"));
