import * as path from "node:path";
import { NotFoundError } from "../../errors";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A collection's file in `dir` (`<id>.db`), for both SQLite engines. The routes validate ids and
 * the engines trust them; this check stays as the one defence that keeps any other string (a
 * `../`) from naming a file outside `dir`.
 */
export function collectionFile(dir: string, collectionId: string): string {
  if (!UUID.test(collectionId)) throw new NotFoundError("Collection not found");
  return path.join(dir, `${collectionId.toLowerCase()}.db`);
}
