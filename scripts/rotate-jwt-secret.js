// `npm run rotate-jwt-secret`: build if needed, then replace the stored session signing secret
// (dist/server/rotate-jwt-secret.js), with the environment the server reads (DATA_DIR, DATABASE_URL, ...).
const path = require("node:path");
const { spawnSync } = require("node:child_process");
require("./build-if-needed").buildIfNeeded();
const cli = path.resolve(__dirname, "..", "dist", "server", "rotate-jwt-secret.js");
const result = spawnSync(process.execPath, [cli, ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(result.status ?? 1);
