import * as fs from "node:fs";
import type Database from "better-sqlite3";
import { aclIdOf as storedIdOf, normaliseAcl, parseAcl } from "../stored-acl";
import type { DocumentPermissions, PermissionsUpdate, ReadableFilter, StoredAcl } from "../search-index";
import { prepared } from "./sqlite-statements";

/**
 * A collection file's file-server permissions (schema 5): each distinct ACL once in `acls`,
 * keyed by its hash (what documents.acl holds and searches filter on), and the filter's SQL.
 */

/** The ACL id of a document's permissions, stored in `acls` if new (inside the caller's transaction); null without permissions. */
export function aclIdOf(db: Database.Database, permissions: DocumentPermissions | null | undefined): string | null {
  if (!permissions) return null;
  const normal = normaliseAcl(permissions.acl);
  const id = storedIdOf(permissions.server, permissions.acl);
  db.prepare("INSERT INTO acls (hash, server, acl) VALUES (?, ?, ?) ON CONFLICT (hash) DO NOTHING").run(id, permissions.server, normal);
  return id;
}

/** Documents' permissions replaced in place, in one transaction. */
export function writePermissions(db: Database.Database, sourceId: string, updates: PermissionsUpdate[]): void {
  const update = db.prepare("UPDATE documents SET acl = ?, changed_at = ? WHERE source_id = ? AND path = ?");
  db.transaction(() => {
    for (const { path, permissions } of updates) update.run(aclIdOf(db, permissions), permissions?.changedAt?.getTime() ?? null, sourceId, path);
  }).immediate();
}

/**
 * The file's ACLs, with a version that changes when one is added (their count and newest
 * sequence) or the file is replaced (its inode): ids are hashes, so a cache of them is never
 * wrong about an id it holds, only short of new ones.
 */
export function readAcls(db: Database.Database): { version: string; acls: StoredAcl[] } {
  const rows = prepared(db, "SELECT hash, server, acl FROM acls ORDER BY seq").all() as Array<{ hash: string; server: string; acl: string }>;
  const newest = prepared(db, "SELECT coalesce(max(seq), 0) FROM acls", true).get() as number;
  const inode = fs.statSync(db.name, { throwIfNoEntry: false })?.ino ?? 0;
  return { version: `${inode}:${rows.length}:${newest}`, acls: rows.map((row) => ({ id: row.hash, server: row.server, acl: parseAcl(row.acl) })) };
}

/** The version alone (readAcls' first part), read without the rows: what a cache checks per request. */
export function aclVersion(db: Database.Database): string {
  const row = prepared(db, "SELECT count(*) AS n, coalesce(max(seq), 0) AS newest FROM acls").get() as { n: number; newest: number };
  const inode = fs.statSync(db.name, { throwIfNoEntry: false })?.ino ?? 0;
  return `${inode}:${row.n}:${row.newest}`;
}

/**
 * The permission condition on a document row `d`, with its parameters, or null without a
 * filter: its ACL is one the caller may read, or it has none (a plain source's document).
 */
export function readableSql(filter: ReadableFilter, param: (value: string) => string): string | null {
  if (filter.readableAcls === undefined) return null;
  // One parameter however many ids: json_each's rows are looked up once per statement.
  return `(d.acl IS NULL OR d.acl IN (SELECT value FROM json_each(${param(JSON.stringify(filter.readableAcls))})))`;
}

/** Which of these documents the filter lets through. */
export function readableDocumentIds(db: Database.Database, documentIds: string[], filter: ReadableFilter): Set<string> {
  if (filter.readableAcls === undefined) return new Set(documentIds);
  const condition = readableSql(filter, () => "@readable");
  const rows = db
    .prepare(`SELECT d.id FROM documents d WHERE d.id IN (SELECT value FROM json_each(@ids)) AND ${condition}`)
    .pluck()
    .all({ ids: JSON.stringify(documentIds), readable: JSON.stringify(filter.readableAcls) }) as string[];
  return new Set(rows);
}
