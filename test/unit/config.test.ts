import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "../../server/config";

describe("loadConfig", () => {
  it("applies the runtime contract's defaults", () => {
    const config = loadConfig({ HOME: "/home/u" });
    assert.equal(config.port, 8420);
    assert.equal(config.host, "127.0.0.1");
    assert.equal(config.ollamaHost, "http://127.0.0.1:11434");
    assert.equal(config.publicUrl, null, "derived from the listening address once known");
    assert.equal(config.idp, null);
    assert.equal(config.google, null);
    assert.ok(config.dataDir.endsWith(`${path.sep}Sluice`));
  });

  it("reads PORT, HOST, DATA_DIR, the identity provider and the Google client", () => {
    const config = loadConfig({
      PORT: "0",
      HOST: "0.0.0.0",
      DATA_DIR: "/tmp/x",
      IDP_JWKS_URL: "http://127.0.0.1:9/jwks",
      IDP_ISSUER: "iss",
      GOOGLE_CLIENT_ID: "id",
      GOOGLE_CLIENT_SECRET: "secret",
      GOOGLE_API_URL: "http://127.0.0.1:9/",
      PUBLIC_URL: "https://sluice.example.org/",
    });
    assert.equal(config.publicUrl, "https://sluice.example.org");
    assert.equal(config.port, 0);
    assert.equal(config.host, "0.0.0.0");
    assert.equal(config.dataDir, path.resolve("/tmp/x"));
    assert.deepEqual(config.idp, { jwksUrl: "http://127.0.0.1:9/jwks", issuer: "iss", audience: undefined });
    assert.equal(config.google?.apiUrl, "http://127.0.0.1:9");
    assert.equal(config.google?.tokenUrl, "https://oauth2.googleapis.com/token");
  });

  it("refuses an invalid PORT or URL with a clear message", () => {
    assert.throws(() => loadConfig({ PORT: "eighty" }), (e: unknown) => e instanceof ConfigError && /PORT/.test(e.message));
    assert.throws(() => loadConfig({ PORT: "70000" }), ConfigError);
    assert.throws(() => loadConfig({ OLLAMA_HOST: "not a url" }), /OLLAMA_HOST/);
  });

  it("reads DATABASE_URL (postgres only) and never echoes it in errors", () => {
    assert.equal(loadConfig({}).databaseUrl, null);
    assert.equal(loadConfig({ DATABASE_URL: "postgres://u:p@db.lan:5432/sluice" }).databaseUrl, "postgres://u:p@db.lan:5432/sluice");
    assert.equal(loadConfig({ DATABASE_URL: "postgresql://db/sluice" }).databaseUrl, "postgresql://db/sluice");
    assert.throws(() => loadConfig({ DATABASE_URL: "mysql://u:secret@db/x" }), (e: unknown) => e instanceof ConfigError && /DATABASE_URL/.test(e.message) && !/secret/.test(e.message));
    assert.throws(() => loadConfig({ DATABASE_URL: "not a url" }), /DATABASE_URL/);
  });
});

describe("FOLDER_SOURCE_ROOTS", () => {
  it("is off (no roots) when unset or empty; lists absolute folders split on the platform's path separator", () => {
    assert.deepEqual(loadConfig({}).folderSourceRoots, []);
    assert.deepEqual(loadConfig({ FOLDER_SOURCE_ROOTS: " " }).folderSourceRoots, []);
    const [a, b] = [path.resolve("/srv/docs"), path.resolve("/mnt/nas")];
    assert.deepEqual(loadConfig({ FOLDER_SOURCE_ROOTS: `${a}${path.delimiter}${b}/${path.delimiter}` }).folderSourceRoots, [a, b]);
  });

  it("refuses a relative entry with a clear message", () => {
    assert.throws(() => loadConfig({ FOLDER_SOURCE_ROOTS: "docs" }), (e: unknown) => e instanceof ConfigError && /FOLDER_SOURCE_ROOTS must list absolute folders/.test(e.message) && /"docs"/.test(e.message));
  });
});
