// Writes the UI's view of the API from the built server, with no network: starts dist/server on
// 127.0.0.1 (PORT=0, a temp DATA_DIR), reads /api/openapi.json, and writes under renderer/src/generated/
// (gitignored) the document, its TypeScript types (openapi-typescript) and the request bodies'
// field rules (form-rules.ts), so a wire change breaks the renderer's type check.
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const Module = require("node:module");
const os = require("node:os");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const OUT = path.join(root, "renderer", "src", "generated");
const DOCUMENT = path.join(OUT, "openapi.json");
const SCHEMA_TYPES = path.join(OUT, "api-schema.d.ts");
const FORM_RULES = path.join(OUT, "form-rules.ts");
const SERVER_ENTRY = path.join(root, "dist", "server", "main.js");

/** Runs the built server until it prints its address, answers the document, and stops it. */
async function fetchDocument() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-openapi-"));
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    cwd: root,
    // Only what a desktop default needs: no setting of the caller's (a team database, a queue) reaches this throwaway server.
    env: { PATH: process.env.PATH ?? "", HOME: dataDir, PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, SLUICE_SECRETS: "file", LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server did not start in 60 s:\n${output}`)), 60_000);
      child.stderr.on("data", (chunk) => (output += chunk));
      child.stdout.on("data", (chunk) => {
        output += chunk;
        const match = /listening on (https?:\/\/\S+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`the server exited with ${code} before listening:\n${output}`));
      });
    });
    const res = await fetch(`${url}/api/openapi.json`);
    if (!res.ok) throw new Error(`GET /api/openapi.json answered ${res.status}`);
    return await res.json();
  } finally {
    if (child.exitCode === null) child.kill("SIGTERM");
    await exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * openapi-typescript prints with TypeScript 5's compiler API, which TypeScript 7 (the project's
 * compiler) no longer has: its `require("typescript")` gets the `typescript5` alias instead.
 */
function loadOpenApiTypescript() {
  const original = Module._resolveFilename;
  Module._resolveFilename = function resolve(request, parent, ...rest) {
    if (request === "typescript" && parent?.filename?.includes(`${path.sep}openapi-typescript${path.sep}`)) {
      return original.call(this, "typescript5", parent, ...rest);
    }
    return original.call(this, request, parent, ...rest);
  };
  try {
    return require("openapi-typescript");
  } finally {
    Module._resolveFilename = original;
  }
}

const RULE_KEYS = ["minLength", "maxLength", "pattern", "enum", "minimum", "maximum"];

/** Each JSON body's fields (nested objects as dotted paths) with the constraints the server's zod schema declares. */
function formRules(document) {
  const rules = {};
  const walk = (schema, prefix, required, into) => {
    for (const [name, field] of Object.entries(schema.properties ?? {})) {
      const key = prefix ? `${prefix}.${name}` : name;
      if (field.type === "object" && field.properties) walk(field, key, field.required ?? [], into);
      const rule = { required: required.includes(name) };
      for (const constraint of RULE_KEYS) if (field[constraint] !== undefined) rule[constraint] = field[constraint];
      into[key] = rule;
    }
  };
  for (const [apiPath, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const schema = operation.requestBody?.content?.["application/json"]?.schema;
      if (!schema?.properties) continue;
      const fields = {};
      walk(schema, "", schema.required ?? [], fields);
      rules[`${method.toUpperCase()} ${apiPath}`] = fields;
    }
  }
  return rules;
}

/** Writes only what changed, so an unchanged document leaves the UI's build up to date. */
function writeIfChanged(file, text) {
  if (fs.existsSync(file) && fs.readFileSync(file, "utf8") === text) return false;
  fs.writeFileSync(file, text);
  return true;
}

async function generateApiClient() {
  const document = await fetchDocument();
  fs.mkdirSync(OUT, { recursive: true });
  const { default: openapiTS, astToString } = loadOpenApiTypescript();
  const types = astToString(await openapiTS(document, { alphabetize: true }));
  const header = "// Generated by scripts/openapi-client.js from the server's /api/openapi.json: do not edit.\n";
  let changed = writeIfChanged(DOCUMENT, `${JSON.stringify(document, null, 2)}\n`);
  changed = writeIfChanged(SCHEMA_TYPES, `${header}${types}`) || changed;
  const rules = `${header}export const formRules = ${JSON.stringify(formRules(document), null, 2)} as const;\n`;
  changed = writeIfChanged(FORM_RULES, rules) || changed;
  return changed;
}

module.exports = { generateApiClient, GENERATED_DIR: OUT };
if (require.main === module) {
  generateApiClient().catch((error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exit(1);
  });
}
