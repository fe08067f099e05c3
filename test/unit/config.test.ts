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
      IDP_AUDIENCE: "aud",
      GOOGLE_CLIENT_ID: "id",
      GOOGLE_CLIENT_SECRET: "secret",
      GOOGLE_API_URL: "http://127.0.0.1:9/",
      PUBLIC_URL: "https://sluice.example.org/",
    });
    assert.equal(config.publicUrl, "https://sluice.example.org");
    assert.equal(config.port, 0);
    assert.equal(config.host, "0.0.0.0");
    assert.equal(config.dataDir, path.resolve("/tmp/x"));
    assert.deepEqual(config.idp, { jwksUrl: "http://127.0.0.1:9/jwks", issuer: "iss", audience: "aud" });
    assert.equal(config.google?.apiUrl, "http://127.0.0.1:9");
    assert.equal(config.google?.tokenUrl, "https://oauth2.googleapis.com/token");
  });

  it("social sign-in needs IDP_ISSUER and IDP_AUDIENCE with IDP_JWKS_URL: one error names each one missing, beside any other problem", () => {
    assert.throws(
      () => loadConfig({ IDP_JWKS_URL: "http://127.0.0.1:9/jwks", PORT: "eighty" }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(error.problems.map((p) => p.split(" ")[0]), ["PORT", "IDP_ISSUER", "IDP_AUDIENCE"]);
        assert.match(error.message, /IDP_ISSUER must be set when IDP_JWKS_URL is \(social sign-in checks that the provider's tokens name it as their issuer\)/);
        return true;
      },
    );
    assert.throws(() => loadConfig({ IDP_JWKS_URL: "http://127.0.0.1:9/jwks", IDP_ISSUER: "iss", IDP_AUDIENCE: " " }), /IDP_AUDIENCE must be set/);
    assert.equal(loadConfig({ IDP_ISSUER: "iss", IDP_AUDIENCE: "aud" }).idp, null, "without IDP_JWKS_URL social sign-in stays off");
  });

  it("reads TLS_CERT and TLS_KEY as absolute paths, both or neither, and never repeats PEM text given in their place", () => {
    assert.equal(loadConfig({}).tls, null, "plain HTTP by default");
    assert.deepEqual(loadConfig({ TLS_CERT: "certs/server.pem", TLS_KEY: "/etc/sluice/server.key" }).tls, { certFile: path.resolve("certs/server.pem"), keyFile: "/etc/sluice/server.key" });
    assert.throws(
      () => loadConfig({ TLS_CERT: "/etc/sluice/server.pem" }),
      (error: unknown) => error instanceof ConfigError && error.problems.length === 1 && /^TLS_KEY must be set when TLS_CERT is \(the path of the private key of that certificate\): HTTPS needs both$/.test(error.message),
    );
    assert.throws(() => loadConfig({ TLS_KEY: "/etc/sluice/server.key", PORT: "x" }), (error: unknown) => error instanceof ConfigError && error.problems.length === 2 && /TLS_CERT must be set when TLS_KEY is \(the path of the certificate of that key\)/.test(error.message));
    const keyText = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----";
    assert.throws(
      () => loadConfig({ TLS_CERT: "/etc/sluice/server.pem", TLS_KEY: keyText }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(error.problems, ["TLS_KEY must be the path of a PEM file, not the PEM text itself"]);
        assert.doesNotMatch(error.message, /MIGHAgEA/);
        return true;
      },
    );
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

  it("lists every bad variable in one ConfigError, never repeating a secret", () => {
    const env = {
      PORT: "eighty",
      SLUICE_SECRETS: "keychain",
      SMB_TIMEOUT_MS: "-5",
      REDIS_URL: "http://user:redis-password@cache",
      DATABASE_URL: "mysql://u:db-password@db/x",
      JWT_SECRET: "short-jwt-secret",
      LOG_LEVEL: "loud",
      SLUICE_SSE_KEEPALIVE_MS: "soon",
    };
    assert.throws(
      () => loadConfig(env),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(
          error.problems.map((p) => p.split(" ")[0]),
          ["PORT", "SLUICE_SECRETS", "SMB_TIMEOUT_MS", "DATABASE_URL", "REDIS_URL", "JWT_SECRET", "SLUICE_SSE_KEEPALIVE_MS", "LOG_LEVEL"],
        );
        assert.match(error.message, /PORT must be an integer from 0 to 65535, got "eighty"; SLUICE_SECRETS must be "auto" or "file", got "keychain"/);
        assert.match(error.message, /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"/);
        for (const secret of ["redis-password", "db-password", "short-jwt-secret"]) assert.ok(!error.message.includes(secret), secret);
        return true;
      },
    );
  });

  it("treats a blank variable as unset", () => {
    const config = loadConfig({ PORT: " ", HOST: "", OLLAMA_HOST: "  ", LOG_LEVEL: "", SMB_TIMEOUT_MS: "" });
    assert.equal(config.port, 8420);
    assert.equal(config.host, "127.0.0.1");
    assert.equal(config.ollamaHost, "http://127.0.0.1:11434");
    assert.equal(config.logLevel, "info");
    assert.equal(config.smbTimeoutMs, 15_000);
  });

  it("reads the scheduler's tick (SLUICE_SCHEDULER_TICK_MS) and the test clock file (SLUICE_TEST_CLOCK_FILE)", () => {
    const defaults = loadConfig({});
    assert.equal(defaults.schedulerTickMs, 15_000);
    assert.equal(defaults.testClockFile, null);
    const config = loadConfig({ SLUICE_SCHEDULER_TICK_MS: "100", SLUICE_TEST_CLOCK_FILE: "/tmp/clock" });
    assert.equal(config.schedulerTickMs, 100);
    assert.equal(config.testClockFile, path.resolve("/tmp/clock"));
    assert.throws(() => loadConfig({ SLUICE_SCHEDULER_TICK_MS: "0" }), /SLUICE_SCHEDULER_TICK_MS must be an integer from 10 to 3600000, got "0"/);
  });

  it("reads the model catalog settings (MODEL_LIBRARY_URL, SSE keep-alive, pull retry delay)", () => {
    const defaults = loadConfig({});
    assert.equal(defaults.modelLibraryUrl, null);
    assert.equal(defaults.sseKeepAliveMs, 10_000);
    assert.equal(defaults.pullRetryDelayMs, 1_000);
    const config = loadConfig({ MODEL_LIBRARY_URL: "http://127.0.0.1:9/library.json", SLUICE_SSE_KEEPALIVE_MS: "250", SLUICE_PULL_RETRY_DELAY_MS: "20" });
    assert.equal(config.modelLibraryUrl, "http://127.0.0.1:9/library.json");
    assert.equal(config.sseKeepAliveMs, 250);
    assert.equal(config.pullRetryDelayMs, 20);
    assert.throws(() => loadConfig({ MODEL_LIBRARY_URL: "library.json" }), /MODEL_LIBRARY_URL must be a URL/);
    assert.throws(() => loadConfig({ SLUICE_PULL_RETRY_DELAY_MS: "0" }), /SLUICE_PULL_RETRY_DELAY_MS must be a positive integer, got "0"/);
  });

  it("LOG_LEVEL: info by default, any pino level in any case", () => {
    assert.equal(loadConfig({}).logLevel, "info");
    for (const level of ["fatal", "error", "warn", "info", "debug", "trace", "silent"]) assert.equal(loadConfig({ LOG_LEVEL: level }).logLevel, level);
    assert.equal(loadConfig({ LOG_LEVEL: "DEBUG" }).logLevel, "debug");
    assert.throws(() => loadConfig({ LOG_LEVEL: "verbose" }), ConfigError);
  });

  it("SMB_ALLOWED_NETWORKS: unset is any address; addresses and CIDR networks split on commas or spaces; a bad entry is named", () => {
    assert.equal(loadConfig({}).smbAllowedNetworks, null);
    assert.equal(loadConfig({ SMB_ALLOWED_NETWORKS: "  " }).smbAllowedNetworks, null);
    assert.deepEqual(loadConfig({ SMB_ALLOWED_NETWORKS: "192.168.10.0/24, 10.0.0.5 fd00::/8,::1" }).smbAllowedNetworks, [
      "192.168.10.0/24",
      "10.0.0.5/32",
      "fd00::/8",
      "::1/128",
    ]);
    assert.throws(
      () => loadConfig({ SMB_ALLOWED_NETWORKS: "10.0.0.0/8, files.example.lan, 10.0.0.0/33, fd00::/129" }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.problems.length === 3 &&
        error.problems[0].startsWith("SMB_ALLOWED_NETWORKS entries must be IP addresses or networks") &&
        error.problems[0].endsWith('"files.example.lan" is not an IP address or a network such as 192.168.10.0/24') &&
        error.problems[1].endsWith('"10.0.0.0/33" has a prefix length outside 0 to 32') &&
        error.problems[2].endsWith('"fd00::/129" has a prefix length outside 0 to 128'),
    );
    assert.throws(() => loadConfig({ SMB_ALLOWED_NETWORKS: " , " }), /SMB_ALLOWED_NETWORKS must list at least one IP address or network/);
  });

  it("SMB_ALLOWED_PORTS: unset is null (the LAN rule decides); ports split on commas or spaces; a bad entry is named, the value not repeated", () => {
    assert.equal(loadConfig({}).smbAllowedPorts, null);
    assert.deepEqual(loadConfig({ SMB_ALLOWED_PORTS: "445, 10445 139" }).smbAllowedPorts, [445, 10445, 139]);
    assert.throws(
      () => loadConfig({ SMB_ALLOWED_PORTS: "445, 0, 70000, smb" }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.problems.length === 3 &&
        error.problems.every((p) => p.startsWith("SMB_ALLOWED_PORTS must be ports from 1 to 65535") && !p.includes("got")) &&
        error.problems[2].endsWith('"smb" is not one'),
    );
    assert.throws(() => loadConfig({ SMB_ALLOWED_PORTS: " , " }), /SMB_ALLOWED_PORTS must list at least one port/);
  });

  it("SMB_CHECK_DEADLINE_S: 25 s by default, 1 to 30", () => {
    assert.equal(loadConfig({}).smbCheckDeadlineMs, 25_000);
    assert.equal(loadConfig({ SMB_CHECK_DEADLINE_S: "6" }).smbCheckDeadlineMs, 6_000);
    assert.throws(() => loadConfig({ SMB_CHECK_DEADLINE_S: "31" }), /SMB_CHECK_DEADLINE_S must be a whole number of seconds from 1 to 30, got "31"/);
    assert.throws(() => loadConfig({ SMB_CHECK_DEADLINE_S: "0" }), /SMB_CHECK_DEADLINE_S must be a whole number of seconds from 1 to 30/);
  });

  it("OLLAMA_REGISTRIES: Ollama's own registry by default; host names (with a port) in lower case; a bad entry is named", () => {
    assert.deepEqual(loadConfig({}).ollamaRegistries, ["registry.ollama.ai"]);
    assert.deepEqual(loadConfig({ OLLAMA_REGISTRIES: "registry.ollama.ai, Models.Corp.Example:5000" }).ollamaRegistries, ["registry.ollama.ai", "models.corp.example:5000"]);
    assert.throws(() => loadConfig({ OLLAMA_REGISTRIES: "http://evil.example/x" }), /OLLAMA_REGISTRIES entries must be host names such as registry\.example\.com .*"http:\/\/evil\.example\/x" is not one/);
  });

  it("FOLDER_SOURCE_ROOTS: absolute paths split on the platform's delimiter; unset or empty is none", () => {
    assert.deepEqual(loadConfig({}).folderSourceRoots, []);
    assert.deepEqual(loadConfig({ FOLDER_SOURCE_ROOTS: "" }).folderSourceRoots, []);
    const a = path.resolve("/srv/shared");
    const b = path.resolve("/home/team/docs");
    const roots = loadConfig({ FOLDER_SOURCE_ROOTS: [a + path.sep, "", ` ${b} `].join(path.delimiter) }).folderSourceRoots;
    assert.deepEqual(roots, [a, b], "trailing separators, blanks and spaces dropped");
    assert.throws(
      () => loadConfig({ FOLDER_SOURCE_ROOTS: [a, "relative/docs", "./here"].join(path.delimiter) }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.problems.length === 2 &&
        error.problems[0] === 'FOLDER_SOURCE_ROOTS entries must be absolute paths; "relative/docs" is not' &&
        error.problems[1].includes('"./here"'),
    );
  });

  it("FOLDER_SOURCE_DOTFILES: skip (the default) or index, nothing else", () => {
    assert.equal(loadConfig({}).folderSourceDotfiles, "skip");
    assert.equal(loadConfig({ FOLDER_SOURCE_DOTFILES: "index" }).folderSourceDotfiles, "index");
    assert.throws(() => loadConfig({ FOLDER_SOURCE_DOTFILES: "yes" }), /FOLDER_SOURCE_DOTFILES must be "skip" or "index"/);
  });
});

describe("OLLAMA_HOST, read as Ollama reads it", () => {
  const forms: Array<[string, string]> = [
    ["127.0.0.1:11434", "http://127.0.0.1:11434"],
    ["localhost:11434", "http://localhost:11434"],
    ["localhost", "http://localhost:11434"],
    ["ollama.lan:8000", "http://ollama.lan:8000"],
    ["0.0.0.0", "http://127.0.0.1:11434"],
    ["0.0.0.0:11435", "http://127.0.0.1:11435"],
    [":11435", "http://127.0.0.1:11435"],
    ["http://0.0.0.0:11434", "http://127.0.0.1:11434"],
    ["http://localhost:11434/", "http://localhost:11434"],
    ["http://ollama.lan", "http://ollama.lan"],
    ["https://ollama.lan", "https://ollama.lan"],
    ["https://ollama.lan:8443/ollama/", "https://ollama.lan:8443/ollama"],
    ["ollama.lan/proxy/ollama", "http://ollama.lan:11434/proxy/ollama"],
    ["::1", "http://[::1]:11434"],
    ["[::1]:11500", "http://[::1]:11500"],
    ["[::]", "http://[::1]:11434"],
    ["'127.0.0.1:11434'", "http://127.0.0.1:11434"],
    ['"localhost"', "http://localhost:11434"],
    ["ollama.com", "https://ollama.com"],
    ["HTTP://Ollama.LAN:11434", "http://ollama.lan:11434"],
  ];
  for (const [value, expected] of forms) {
    it(`${value} -> ${expected}`, () => {
      assert.equal(loadConfig({ OLLAMA_HOST: value }).ollamaHost, expected);
    });
  }

  it("refuses what cannot reach an Ollama server, saying why", () => {
    assert.throws(() => loadConfig({ OLLAMA_HOST: "localhost:99999" }), /OLLAMA_HOST must have a port from 0 to 65535, got "localhost:99999"/);
    assert.throws(() => loadConfig({ OLLAMA_HOST: "localhost:port" }), /OLLAMA_HOST must have a port/);
    assert.throws(() => loadConfig({ OLLAMA_HOST: "ftp://ollama.lan" }), /OLLAMA_HOST must use http:\/\/ or https:\/\//);
    assert.throws(() => loadConfig({ OLLAMA_HOST: "ollama lan" }), /OLLAMA_HOST must be an address such as/);
    assert.throws(() => loadConfig({ OLLAMA_HOST: "http://ollama.lan:11434?x=1" }), /OLLAMA_HOST must have a port/);
  });

  it("MIN_FREE_DISK_MB: 100 MB by default, in decimal megabytes, 0 allowed, anything else named", () => {
    assert.equal(loadConfig({}).minFreeDiskBytes, 100_000_000);
    assert.equal(loadConfig({ MIN_FREE_DISK_MB: "0" }).minFreeDiskBytes, 0);
    assert.equal(loadConfig({ MIN_FREE_DISK_MB: " 2048 " }).minFreeDiskBytes, 2_048_000_000);
    assert.throws(() => loadConfig({ MIN_FREE_DISK_MB: "1.5" }), /MIN_FREE_DISK_MB must be a whole number of megabytes \(0 or more\), got "1.5"/);
    assert.throws(() => loadConfig({ MIN_FREE_DISK_MB: "-1" }), /MIN_FREE_DISK_MB must be a whole number/);
  });
});

describe("roles and sign-up settings (issue 34)", () => {
  it("SIGNUP: open on a loopback HOST, invite on any other; set, it is as written; a bad value is named", () => {
    assert.equal(loadConfig({}).signup, "open");
    assert.equal(loadConfig({ HOST: "localhost" }).signup, "open");
    assert.equal(loadConfig({ HOST: "::1" }).signup, "open");
    assert.equal(loadConfig({ HOST: "0.0.0.0" }).signup, "invite");
    assert.equal(loadConfig({ HOST: "192.168.1.5" }).signup, "invite");
    assert.equal(loadConfig({ HOST: "0.0.0.0", SIGNUP: "open" }).signup, "open");
    assert.equal(loadConfig({ SIGNUP: "off" }).signup, "off");
    assert.throws(() => loadConfig({ SIGNUP: "closed" }), /SIGNUP must be "open", "invite" or "off", got "closed"/);
  });

  it("ADMIN_EMAILS and SIGNUP_DOMAINS: comma-separated, trimmed, lower-cased; unset is none; a bad entry is named", () => {
    const config = loadConfig({ ADMIN_EMAILS: " Boss@Corp.example, ops@corp.example ,", SIGNUP_DOMAINS: "Corp.Example, @lab.corp.example" });
    assert.deepEqual(config.adminEmails, ["boss@corp.example", "ops@corp.example"]);
    assert.deepEqual(config.signupDomains, ["corp.example", "lab.corp.example"]);
    assert.deepEqual(loadConfig({}).adminEmails, []);
    assert.deepEqual(loadConfig({}).signupDomains, []);
    assert.throws(() => loadConfig({ ADMIN_EMAILS: "boss@corp.example,nobody" }), /ADMIN_EMAILS entries must be email addresses separated by commas; "nobody" is not/);
    assert.throws(() => loadConfig({ SIGNUP_DOMAINS: "corp" }), /SIGNUP_DOMAINS entries must be domain names such as corp.example, separated by commas; "corp" is not/);
  });
});
