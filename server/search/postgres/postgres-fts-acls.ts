import type { DataSource, QueryRunner } from "typeorm";
import { aclIdOf, normaliseAcl, parseAcl } from "../stored-acl";
import type { DocumentPermissions, PermissionsUpdate, ReadableFilter, StoredAcl } from "../search-index";
import { pgText } from "./postgres-fts-words";
import { inTransaction } from "./postgres-transaction";

/**
 * A collection's file-server permissions on PostgreSQL (schema 6): each distinct ACL once in
 * `search_acls`, keyed by (collection, hash), the hash being what search_documents.acl holds
 * and searches filter on (the same ids as the SQLite engine's).
 */

/** Each document's ACL id (null without permissions), its ACL stored if new, inside the caller's transaction. */
export async function aclIdsOf(q: QueryRunner, collection: string, permissions: Array<DocumentPermissions | null | undefined>): Promise<Array<string | null>> {
  const fresh = new Map<string, { server: string; normal: string }>();
  const ids = permissions.map((p) => {
    if (!p) return null;
    const normal = normaliseAcl(p.acl);
    const id = aclIdOf(p.server, p.acl);
    fresh.set(id, { server: p.server, normal });
    return id;
  });
  if (fresh.size > 0) {
    const rows = [...fresh.entries()];
    await q.query(
      `INSERT INTO search_acls (collection_id, hash, server, acl) SELECT $1, x.hash, x.server, x.acl
       FROM unnest($2::text[], $3::text[], $4::text[]) AS x(hash, server, acl) ON CONFLICT (collection_id, hash) DO NOTHING`,
      [collection, rows.map(([id]) => id), rows.map(([, r]) => pgText(r.server)), rows.map(([, r]) => r.normal)],
    );
  }
  return ids;
}

/** Documents' permissions replaced in place, in one transaction. */
export async function writePermissions(db: DataSource, collection: string, sourceId: string, updates: PermissionsUpdate[]): Promise<void> {
  await inTransaction(db, async (q) => {
    const ids = await aclIdsOf(q, collection, updates.map((u) => u.permissions));
    await q.query(
      `UPDATE search_documents d SET acl = x.acl, changed_at = x.changed_at
       FROM unnest($3::text[], $4::text[], $5::bigint[]) AS x(path, acl, changed_at)
       WHERE d.collection_id = $1 AND d.source_id = $2 AND d.path = x.path`,
      [collection, sourceId, updates.map((u) => pgText(u.path)), ids, updates.map((u) => u.permissions?.changedAt?.getTime() ?? null)],
    );
  });
}

/** The collection's ACLs and their version (their count and newest sequence: a bigserial is never reused, so a version is never repeated). */
export async function readAcls(db: DataSource, collection: string): Promise<{ version: string; acls: StoredAcl[] }> {
  const rows = (await db.query("SELECT hash, server, acl, seq FROM search_acls WHERE collection_id = $1 ORDER BY seq", [collection])) as Array<{
    hash: string;
    server: string;
    acl: string;
    seq: string;
  }>;
  const newest = rows.length === 0 ? "0" : rows[rows.length - 1].seq;
  return { version: `${rows.length}:${newest}`, acls: rows.map((row) => ({ id: row.hash, server: row.server, acl: parseAcl(row.acl) })) };
}

export async function aclVersion(db: DataSource, collection: string): Promise<string> {
  const [row] = (await db.query("SELECT count(*) AS n, coalesce(max(seq), 0) AS newest FROM search_acls WHERE collection_id = $1", [collection])) as Array<{
    n: string;
    newest: string;
  }>;
  return `${row.n}:${row.newest}`;
}

/** aclVersion of several collections in one statement, in order. */
export async function aclVersions(db: DataSource, collections: readonly string[]): Promise<string[]> {
  const rows = (await db.query(
    `SELECT c.id, count(a.seq) AS n, coalesce(max(a.seq), 0) AS newest
       FROM unnest($1::varchar[]) AS c(id) LEFT JOIN search_acls a ON a.collection_id = c.id GROUP BY c.id`,
    [[...collections]],
  )) as Array<{ id: string; n: string; newest: string }>;
  const byId = new Map(rows.map((row) => [row.id, `${row.n}:${row.newest}`]));
  return collections.map((id) => byId.get(id) ?? "0:0");
}

/** The permission condition on a document row `d`, or null without a filter: an ACL the caller may read, or none. */
export function readableCondition(filter: ReadableFilter, param: (value: unknown) => string): string | null {
  if (filter.readableAcls === undefined) return null;
  return `(d.acl IS NULL OR d.acl = ANY(${param([...filter.readableAcls])}::text[]))`;
}

/** Which of these documents the filter lets through. */
export async function readableDocumentIds(db: DataSource, collection: string, documentIds: string[], filter: ReadableFilter): Promise<Set<string>> {
  if (filter.readableAcls === undefined) return new Set(documentIds);
  const rows = (await db.query(
    "SELECT d.id FROM search_documents d WHERE d.collection_id = $1 AND d.id = ANY($2::varchar[]) AND (d.acl IS NULL OR d.acl = ANY($3::text[]))",
    [collection, documentIds, [...filter.readableAcls]],
  )) as Array<{ id: string }>;
  return new Set(rows.map((row) => row.id));
}
