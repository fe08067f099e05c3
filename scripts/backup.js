// `npm run backup -- DIR` and `npm run restore -- DIR`: build if needed, then run the backup CLI
// (dist/server/backup/backup-cli.js) with the command this script was started as.
const path = require("node:path");
const { spawnSync } = require("node:child_process");
require("./build-if-needed").buildIfNeeded();
const cli = path.resolve(__dirname, "..", "dist", "server", "backup", "backup-cli.js");
const result = spawnSync(process.execPath, [cli, ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(result.status ?? 1);
