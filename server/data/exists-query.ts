import type { DataSource, EntityManager, EntityTarget, ObjectLiteral } from "typeorm";

/** Each data source's statements, by entity and columns: built once, from the entity metadata. */
const statements = new WeakMap<DataSource, Map<string, string>>();

/**
 * Whether a row of `entity` has these column values (by property name): `SELECT 1 … LIMIT 1` as
 * plain SQL, built once per entity and columns, then a prepared statement on SQLite. What
 * `manager.exists` answers, for the lookups made on every request (the signed-in user, a group
 * membership): TypeORM's query builder cost several times the lookup itself there.
 */
export async function rowExists<T extends ObjectLiteral>(manager: EntityManager, entity: EntityTarget<T>, where: Record<string, string>): Promise<boolean> {
  const properties = Object.keys(where);
  const source = manager.connection;
  let known = statements.get(source);
  if (!known) {
    known = new Map();
    statements.set(source, known);
  }
  const metadata = source.getMetadata(entity);
  const key = `${metadata.name}\u0000${properties.join("\u0000")}`;
  let sql = known.get(key);
  if (!sql) {
    const driver = source.driver;
    const conditions = properties.map((property, i) => {
      const column = metadata.findColumnWithPropertyName(property);
      if (!column) throw new Error(`${metadata.name} has no property ${property}`);
      return `${driver.escape(column.databaseName)} = ${driver.createParameter(property, i)}`;
    });
    sql = `SELECT 1 FROM ${driver.escape(metadata.tableName)} WHERE ${conditions.join(" AND ")} LIMIT 1`;
    known.set(key, sql);
  }
  const rows = (await manager.query(sql, properties.map((p) => where[p]))) as unknown[];
  return rows.length > 0;
}
