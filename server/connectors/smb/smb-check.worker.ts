import { parentPort } from "node:worker_threads";
import { serve } from "../../threads/rpc";
import { toCheckFailure, type SmbCheckCalls, type SmbCheckResult } from "./smb-check-protocol";
import { SmbConnector, type SmbConnectorOptions } from "./smb.connector";

/**
 * One SMB check (a source's connection test, a share listing, a Windows account's link, a batch
 * of linked accounts' groups) on a thread of its own
 * (smb-check-thread.ts starts one per check): whatever a server makes the client do, in time or
 * in CPU, happens here and never on the API's thread, and the thread is ended at the check's
 * deadline whatever state it is in.
 */

async function withConnector<T>(options: SmbConnectorOptions, work: (connector: SmbConnector) => Promise<T>): Promise<SmbCheckResult<T>> {
  const connector = new SmbConnector(options);
  try {
    return { ok: true, value: await work(connector) };
  } catch (error) {
    return { ok: false, failure: toCheckFailure(error) };
  } finally {
    await connector.close().catch(() => undefined);
  }
}

serve<SmbCheckCalls>(parentPort!, {
  test: (options) => withConnector(options, async (connector) => {
    await connector.test();
    return null;
  }),
  shareListing: (options) => withConnector(options, (connector) => connector.shareListing()),
  identity: (options) => withConnector(options, (connector) => connector.identity()),
  linkedGroups: (options, sids) => withConnector(options, (connector) => connector.linkedGroups(sids)),
});
