// `npm start`: build if needed, then run the headless server (API + UI) in this process.
const path = require("node:path");
require("./build-if-needed").buildIfNeeded();
require(path.resolve(__dirname, "..", "dist", "server", "main.js"));
