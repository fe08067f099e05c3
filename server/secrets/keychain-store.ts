import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import * as path from "node:path";
import type { AsyncEntry as AsyncEntryType, EntryOptions } from "@napi-rs/keyring";
import { SecretStoreError, type SecretStore } from "./secret-store";

type KeyringModule = typeof import("@napi-rs/keyring");

/** How long the startup probe may take before the keychain counts as unavailable. */
const PROBE_TIMEOUT_MS = 5_000;
/** How long one get/set/delete may take before it fails (the async part only, see call()). */
const OP_TIMEOUT_MS = 15_000;

// On Linux the library otherwise falls back to the kernel keyring, which is
// emptied at logout/reboot: a secret stored there would silently vanish.
const ENTRY_OPTIONS: EntryOptions | undefined =
  process.platform === "linux" ? { linux: { store: "secret-service" } } : undefined;

/** Short, stable id of a data dir, so two instances with different DATA_DIRs never share keychain items. */
export function keychainNamespace(dataDir: string): string {
  return createHash("sha256").update(path.resolve(dataDir)).digest("hex").slice(0, 12);
}

/** The keychain account name under which `key` is stored for this data dir. */
export function keychainAccount(key: string, dataDir: string): string {
  return `${key}@${keychainNamespace(dataDir)}`;
}

let keyringModule: KeyringModule | null = null;

// Loaded on first use (after the probe): a missing native binary must mean "no keychain", not a crash at import.
function loadKeyring(): KeyringModule {
  keyringModule ??= require("@napi-rs/keyring") as KeyringModule;
  return keyringModule;
}

function errorText(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split("\n")[0].trim() || "unknown error";
}

async function withTimeout<T>(what: string, ms: number, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new SecretStoreError(`${what} timed out after ${ms} ms`));
    }, ms);
    timer.unref();
  });
  try {
    return await Promise.race([run(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// Runs in a child process: on Linux the keyring library connects to D-Bus
// synchronously (even for AsyncEntry), so a bus that never answers would freeze
// this process; a child can be killed when it does not answer in time.
const PROBE_SCRIPT = `
const [modulePath, service, account, value, optionsJson] = process.argv.slice(1);
const done = (r) => process.stdout.write(JSON.stringify(r), () => process.exit(0));
try {
  const { Entry } = require(modulePath);
  const entry = new Entry(service, account, optionsJson ? JSON.parse(optionsJson) : undefined);
  entry.setPassword(value);
  let read;
  try { read = entry.getPassword(); } finally { entry.deletePassword(); }
  done(read === value ? { ok: true } : { ok: false, reason: "a probe value written to the keychain did not read back" });
} catch (err) {
  done({ ok: false, reason: String((err && err.message) || err) });
}
`;

/**
 * Checks that the OS keychain really works by writing, reading back and
 * deleting a throwaway item. Resolves with the reason when it does not.
 */
export async function probeKeychain(
  service: string,
  dataDir: string,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  let modulePath: string;
  try {
    modulePath = require.resolve("@napi-rs/keyring");
  } catch (err) {
    return { ok: false, reason: `keyring module not found: ${errorText(err)}` };
  }
  const account = keychainAccount(`__probe__.${randomBytes(4).toString("hex")}`, dataDir);
  const value = randomBytes(16).toString("hex");
  const args = ["-e", PROBE_SCRIPT, modulePath, service, account, value, ENTRY_OPTIONS ? JSON.stringify(ENTRY_OPTIONS) : ""];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      // ELECTRON_RUN_AS_NODE: inside Electron, execPath is the Electron binary.
      { env: { ...process.env, ELECTRON_RUN_AS_NODE: "1" }, timeout: timeoutMs, killSignal: "SIGKILL", windowsHide: true },
      (err, stdout) => {
        if (err && (err as { killed?: boolean }).killed) {
          resolve({ ok: false, reason: `the keychain did not answer within ${timeoutMs} ms` });
          return;
        }
        try {
          const result = JSON.parse(stdout) as { ok: boolean; reason?: string };
          resolve(result.ok ? { ok: true } : { ok: false, reason: errorText(result.reason) });
        } catch {
          resolve({ ok: false, reason: `keychain probe failed: ${errorText(err ?? "no answer")}` });
        }
      },
    );
  });
}

/** Secrets kept in the OS keychain (Secret Service, macOS Keychain, Windows Credential Manager). */
export class KeychainSecretStore implements SecretStore {
  readonly kind = "keychain" as const;

  constructor(
    readonly service: string,
    readonly dataDir: string,
  ) {}

  async get(key: string): Promise<string | null> {
    return this.call("read", key, (entry, signal) => entry.getPassword(signal));
  }

  async set(key: string, value: string): Promise<void> {
    if (typeof value !== "string") throw new SecretStoreError(`Secret "${key}" must be a string`);
    await this.call("write", key, (entry, signal) => entry.setPassword(value, signal));
  }

  /** Not atomic across processes (the keychain has no compare-and-set); read back, so every caller agrees with what is stored. */
  async getOrCreate(key: string, make: () => string): Promise<string> {
    const existing = await this.get(key);
    if (existing !== null) return existing;
    const made = make();
    await this.set(key, made);
    return (await this.get(key)) ?? made;
  }

  async delete(key: string): Promise<void> {
    await this.call("delete", key, (entry, signal) => entry.deletePassword(signal));
  }

  // The probe showed the bus answering; if it stops answering later, the Entry
  // constructor can still block this thread (it connects synchronously).
  private async call<T>(verb: string, key: string, op: (entry: AsyncEntryType, signal: AbortSignal) => Promise<T>): Promise<T> {
    if (typeof key !== "string" || key.length === 0) throw new SecretStoreError("Secret key must be a non-empty string");
    const what = `Keychain ${verb} of secret "${key}" (service ${this.service})`;
    try {
      return await withTimeout(what, OP_TIMEOUT_MS, (signal) => {
        const entry = new (loadKeyring().AsyncEntry)(this.service, keychainAccount(key, this.dataDir), ENTRY_OPTIONS);
        return op(entry, signal);
      });
    } catch (err) {
      if (err instanceof SecretStoreError) throw err;
      throw new SecretStoreError(`${what} failed: ${errorText(err)}`, { cause: err });
    }
  }
}
