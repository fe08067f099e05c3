import path from "node:path";
import { ConfigError, loadConfig } from "../config";
import { backupDataDir, restoreDataDir } from "./backup";
import { modeOf } from "../composition/compose";
import { recordToolEvent } from "../audit/tool-events";

/**
 * `npm run backup -- DIR` / `npm run restore -- DIR`: DATA_DIR (as the server reads it) to and
 * from a backup folder. The desktop app's menu runs this same file.
 */
async function main(): Promise<void> {
  const [command, dir] = process.argv.slice(2);
  if (!["backup", "restore"].includes(command) || !dir) throw new Error("usage: npm run backup -- DIR | npm run restore -- DIR");
  const config = loadConfig();
  if (modeOf(config).database === "postgres") {
    throw new Error("DATABASE_URL is set: a team server's data is in PostgreSQL; back it up with pg_dump (README: Backups)");
  }
  const target = path.resolve(dir);
  if (command === "backup") {
    const manifest = await backupDataDir(config.dataDir, target);
    const indexes = manifest.files.filter((f) => f.kind === "index");
    const documents = indexes.reduce((sum, f) => sum + (f.counts?.documents ?? 0), 0);
    await recordToolEvent(config.dataDir, config.auditDays, "backup.made", `to ${target}`);
    process.stdout.write(`backed up ${config.dataDir} to ${target}: ${indexes.length} collection index(es), ${documents} document(s)\n`);
  } else {
    const manifest = restoreDataDir(target, config.dataDir);
    await recordToolEvent(config.dataDir, config.auditDays, "backup.restored", `the backup of ${manifest.createdAt} from ${target}`);
    process.stdout.write(`restored the backup of ${manifest.createdAt} from ${target} into ${config.dataDir}\n`);
  }
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? `configuration error: ${error.message}` : (error as Error).message;
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
