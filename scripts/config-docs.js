// `npm run docs:config`: writes docs/configuration.md from the settings table in server/settings.ts
// (through dist/server/config-docs.js, built first if needed). test/unit/config-docs.test.ts
// fails when the committed page differs from what this writes.
const fs = require("node:fs");
const path = require("node:path");
require("./build-if-needed").buildIfNeeded();
const root = path.resolve(__dirname, "..");
const { CONFIGURATION_DOC, configurationMarkdown } = require(path.join(root, "dist", "server", "config-docs.js"));
fs.mkdirSync(path.dirname(path.join(root, CONFIGURATION_DOC)), { recursive: true });
fs.writeFileSync(path.join(root, CONFIGURATION_DOC), configurationMarkdown());
process.stdout.write(`wrote ${CONFIGURATION_DOC}\n`);
