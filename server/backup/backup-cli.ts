import fs from "node:fs";
import path from "node:path";
import { ConfigError, loadConfig } from "../config";
import { backupDataDir, restoreDataDir } from "./backup";
import { modeOf } from "../composition/compose";
import { recordToolEvent } from "../audit/tool-events";

const USAGE = "usage: npm run backup -- DIR [--passphrase-file FILE] | npm run restore -- DIR [--passphrase-file FILE]";

/**
 * `npm run backup -- DIR` / `npm run restore -- DIR`: DATA_DIR (as the server reads it) to and
 * from a backup folder, sealed with a passphrase when one is given (BACKUP_PASSPHRASE, or a file
 * holding it). The desktop app's menu runs this same file.
 */
async function main(): Promise<void> {
  const [command, dir, ...rest] = process.argv.slice(2);
  if (!["backup", "restore"].includes(command) || !dir) throw new Error(USAGE);
  const config = loadConfig();
  if (modeOf(config).database === "postgres") {
    throw new Error("DATABASE_URL is set: a team server's data is in PostgreSQL; back it up with pg_dump (README: Backups)");
  }
  const passphrase = passphraseFile(rest) ?? config.backupPassphrase ?? undefined;
  const target = path.resolve(dir);
  if (command === "backup") {
    const manifest = await backupDataDir(config.dataDir, target, { passphrase });
    const indexes = manifest.files.filter((f) => f.kind === "index");
    const documents = indexes.reduce((sum, f) => sum + (f.counts?.documents ?? 0), 0);
    await recordToolEvent(config.dataDir, config.auditDays, "backup.made", `to ${target}`);
    process.stdout.write(`backed up ${config.dataDir} to ${target}: ${indexes.length} collection index(es), ${documents} document(s)${passphrase ? ", sealed with the passphrase" : ""}\n`);
    if (manifest.secrets === "left-out") {
      process.stdout.write(
        "Saved SMB passwords and Drive sign-ins kept in DATA_DIR were left out (their key would open them for whoever holds the backup): after a restore, add those sources again, or back up with a passphrase (BACKUP_PASSPHRASE or --passphrase-file) to keep them.\n",
      );
    }
  } else {
    const manifest = await restoreDataDir(target, config.dataDir, { passphrase });
    await recordToolEvent(config.dataDir, config.auditDays, "backup.restored", `the backup of ${manifest.createdAt} from ${target}`);
    process.stdout.write(`restored the backup of ${manifest.createdAt} from ${target} into ${config.dataDir}\n`);
  }
}

/** `--passphrase-file FILE`: the passphrase is the file's first line. */
function passphraseFile(args: string[]): string | undefined {
  if (args.length === 0) return undefined;
  if (args.length !== 2 || args[0] !== "--passphrase-file") throw new Error(USAGE);
  const passphrase = fs.readFileSync(args[1], "utf8").split(/\r?\n/)[0];
  if (passphrase.length < 12) throw new Error(`The passphrase in ${args[1]} must be at least 12 characters`);
  return passphrase;
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? `configuration error: ${error.message}` : (error as Error).message;
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
