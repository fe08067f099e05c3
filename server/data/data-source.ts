import "reflect-metadata";
import fs from "node:fs";
import path from "node:path";
import { DataSource } from "typeorm";
import { serializeTransactions } from "./serial-transactions";
import { Collection } from "./entities/collection.entity";
import { GroupMember } from "./entities/group-member.entity";
import { Group } from "./entities/group.entity";
import { User } from "./entities/user.entity";
import { DataSourceRecord } from "./entities/data-source.entity";
import { IngestJob } from "./entities/ingest-job.entity";
import { Pipeline } from "./entities/pipeline.entity";
import { SmbSourceRecord } from "./entities/smb-source.entity";
import { AccountsGroupsCollections1763800000000 } from "./migrations/1763800000000-accounts-groups-collections";
import { SourcesPipelinesJobs1763800100000 } from "./migrations/1763800100000-sources-pipelines-jobs";
import { DriveGrant } from "./entities/drive-grant.entity";
import { DriveSourceRecord } from "./entities/drive-source.entity";
import { DriveFileRecord } from "./entities/drive-file.entity";
import { Drive1763800200000 } from "./migrations/1763800200000-drive";
import { ModelRecord } from "./entities/model.entity";
import { UserModelRecord } from "./entities/user-model.entity";
import { Models1763800300000 } from "./migrations/1763800300000-models";

export const ENTITIES = [User, Group, GroupMember, Collection, DataSourceRecord, SmbSourceRecord, Pipeline, IngestJob, DriveGrant, DriveSourceRecord, DriveFileRecord, ModelRecord, UserModelRecord];
export const MIGRATIONS = [AccountsGroupsCollections1763800000000, SourcesPipelinesJobs1763800100000, Drive1763800200000, Models1763800300000];

/** Opens (creating if needed) the SQLite database under dataDir and brings its schema up to date. */
export async function openDatabase(dataDir: string): Promise<DataSource> {
  fs.mkdirSync(dataDir, { recursive: true });
  const db = new DataSource({
    type: "better-sqlite3",
    database: path.join(dataDir, "sluice.db"),
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsRun: false,
    synchronize: false,
    logging: false,
    // WAL keeps readers (API requests) from waiting on the ingestion writer.
    enableWAL: true,
    prepareDatabase: (raw: { pragma(sql: string): unknown }) => {
      raw.pragma("foreign_keys = ON");
      raw.pragma("busy_timeout = 5000");
    },
  });
  await db.initialize();
  await db.runMigrations({ transaction: "each" });
  serializeTransactions(db);
  return db;
}
