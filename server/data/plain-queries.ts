import type { DataSource, EntityManager, EntityMetadata, EntityTarget, ObjectLiteral } from "typeorm";
import { GroupMember } from "./entities/group-member.entity";

/** Each data source's statements, by entity and columns: built once, from the entity metadata. */
const statements = new WeakMap<DataSource, Map<string, string>>();

/**
 * Plain SQL for the lookups made on every request, built once per entity from its metadata and
 * prepared by the SQLite driver: TypeORM's query builder and result transformer cost several
 * times the lookup itself there (~0.1 to 0.2 ms each; issue 20 item 6). Same answers as
 * `manager.exists` / `manager.findOne` on both back ends; entities with relations or embedded
 * columns are not for these helpers.
 */
function statement(manager: EntityManager, entity: EntityTarget<ObjectLiteral>, kind: string, build: (metadata: EntityMetadata, driver: DataSource["driver"]) => string): { sql: string; metadata: EntityMetadata } {
  const source = manager.connection;
  let known = statements.get(source);
  if (!known) {
    known = new Map();
    statements.set(source, known);
  }
  const metadata = source.getMetadata(entity);
  const key = `${metadata.name}\u0000${kind}`;
  let sql = known.get(key);
  if (!sql) {
    sql = build(metadata, source.driver);
    known.set(key, sql);
  }
  return { sql, metadata };
}

function columnName(metadata: EntityMetadata, property: string): string {
  const column = metadata.findColumnWithPropertyName(property);
  if (!column) throw new Error(`${metadata.name} has no property ${property}`);
  return column.databaseName;
}

/** The row of `entity` with this primary key `id`, as TypeORM would hydrate it; null if none. */
export async function findById<T extends ObjectLiteral>(manager: EntityManager, entity: EntityTarget<T>, id: string): Promise<T | null> {
  const { sql, metadata } = statement(manager, entity, "byId", (metadata, driver) => {
    return `SELECT ${selectedColumns(metadata, driver)} FROM ${driver.escape(metadata.tableName)} WHERE ${driver.escape(columnName(metadata, "id"))} = ${driver.createParameter("id", 0)} LIMIT 1`;
  });
  const [row] = (await manager.query(sql, [id])) as Array<Record<string, unknown>>;
  return row ? hydrate(manager, metadata, row) : null;
}

/**
 * The row of a group-owned `entity` (an `ownerGroupId` property) with this primary key `id`,
 * only when `userId` is a direct member of its owner group; null when the row is missing or
 * the user is not a member. One statement where a lookup and a membership check were two
 * round trips (PostgreSQL: each is a trip to the server on every request).
 */
export async function findMemberOwnedById<T extends ObjectLiteral>(manager: EntityManager, entity: EntityTarget<T>, id: string, userId: string): Promise<T | null> {
  const { sql, metadata } = statement(manager, entity, "memberOwnedById", (metadata, driver) => {
    const members = manager.connection.getMetadata(GroupMember);
    const owner = `${driver.escape(metadata.tableName)}.${driver.escape(columnName(metadata, "ownerGroupId"))}`;
    const membership = `SELECT 1 FROM ${driver.escape(members.tableName)} m WHERE m.${driver.escape(columnName(members, "groupId"))} = ${owner} AND m.${driver.escape(columnName(members, "userId"))} = ${driver.createParameter("userId", 1)}`;
    return `SELECT ${selectedColumns(metadata, driver)} FROM ${driver.escape(metadata.tableName)} WHERE ${driver.escape(columnName(metadata, "id"))} = ${driver.createParameter("id", 0)} AND EXISTS (${membership}) LIMIT 1`;
  });
  const [row] = (await manager.query(sql, [id, userId])) as Array<Record<string, unknown>>;
  return row ? hydrate(manager, metadata, row) : null;
}

function selectedColumns(metadata: EntityMetadata, driver: DataSource["driver"]): string {
  if (metadata.relations.length > 0 || metadata.embeddeds.length > 0) throw new Error(`plain queries do not hydrate ${metadata.name}'s relations`);
  return metadata.columns.map((c) => `${driver.escape(metadata.tableName)}.${driver.escape(c.databaseName)}`).join(", ");
}

function hydrate<T extends ObjectLiteral>(manager: EntityManager, metadata: EntityMetadata, row: Record<string, unknown>): T {
  const driver = manager.connection.driver;
  const hydrated = metadata.create() as T;
  for (const column of metadata.columns) column.setEntityValue(hydrated, driver.prepareHydratedValue(row[column.databaseName], column));
  return hydrated;
}

/** Whether a row of `entity` has these column values (by property name): `SELECT 1 … LIMIT 1`. */
export async function rowExists<T extends ObjectLiteral>(manager: EntityManager, entity: EntityTarget<T>, where: Record<string, string>): Promise<boolean> {
  const properties = Object.keys(where);
  const { sql } = statement(manager, entity, `exists\u0000${properties.join("\u0000")}`, (metadata, driver) => {
    const conditions = properties.map((property, i) => `${driver.escape(columnName(metadata, property))} = ${driver.createParameter(property, i)}`);
    return `SELECT 1 FROM ${driver.escape(metadata.tableName)} WHERE ${conditions.join(" AND ")} LIMIT 1`;
  });
  const rows = (await manager.query(sql, properties.map((p) => where[p]))) as unknown[];
  return rows.length > 0;
}

/**
 * The rows of `entity` whose `property` is one of `values`, as TypeORM would hydrate them (in
 * no set order): `WHERE column IN (...)`, one statement per number of values. For the few ids
 * of a search's hits, read on every search.
 */
export async function findWhereIn<T extends ObjectLiteral>(manager: EntityManager, entity: EntityTarget<T>, property: string, values: string[]): Promise<T[]> {
  if (values.length === 0) return [];
  const { sql, metadata } = statement(manager, entity, `in\u0000${property}\u0000${values.length}`, (metadata, driver) => {
    const parameters = values.map((_, i) => driver.createParameter(`${property}${i}`, i));
    return `SELECT ${selectedColumns(metadata, driver)} FROM ${driver.escape(metadata.tableName)} WHERE ${driver.escape(columnName(metadata, property))} IN (${parameters.join(", ")})`;
  });
  const rows = (await manager.query(sql, values)) as Array<Record<string, unknown>>;
  return rows.map((row) => hydrate<T>(manager, metadata, row));
}
