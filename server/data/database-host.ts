import { parse } from "pg-connection-string";
import { isThisMachine } from "../net/local-addresses";

/**
 * Whether DATABASE_URL's server runs on this machine, so shares its cores with this process. The
 * host is the one node-postgres connects to: the URL's `host` parameter or its host, else PGHOST,
 * else localhost; a path is a Unix socket's directory.
 */
export function databaseOnThisMachine(databaseUrl: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const host = parse(databaseUrl).host || env.PGHOST || "localhost";
  return isThisMachine(host);
}
