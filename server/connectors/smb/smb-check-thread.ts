import { Worker } from "node:worker_threads";
import { ServiceUnavailableError } from "../../errors";
import { Caller } from "../../threads/rpc";
import { WORKER_YOUNG_GENERATION_MB, workerScript } from "../../worker-script";
import { fromCheckFailure, type SmbCheckCalls, type SmbCheckResult } from "./smb-check-protocol";
import { SmbUnreachableError } from "./smb-errors";
import type { ShareListing, SmbConnectorOptions } from "./smb.connector";
import type { SmbIdentity } from "./smb-identity";
import type { GroupResolver } from "../../accounts/smb-account-links";

const WORKER = workerScript(__filename, "smb-check.worker");
/** Retry-After when every check thread is taken: a check rarely lasts longer. */
const CHECKS_BUSY_RETRY_S = 5;

/**
 * The most a check may take, from the call to its answer: a source check gives up within 30 s
 * (issue 34) whatever the server does, however many requests it drags out to their own deadlines.
 */
export const SMB_CHECK_DEADLINE_MS = 25_000;

/**
 * Checks under way at once, per process: each holds a thread (an isolate of some 10-20 MB) for up
 * to the deadline, and the per-user rate limit alone does not bound many users together.
 */
export const SMB_CHECKS_AT_ONCE = 8;
let checksRunning = 0;
/** Background checks (a run's refresh of linked accounts) waiting for a thread, first come first served. */
const waitingForThread: Array<() => void> = [];

/** A check's thread holds one SMB conversation: a small heap, so a server's absurd sizes end it rather than the process. */
const CHECK_THREAD_OLD_GENERATION_MB = 128;

/** Connects and signs in, off the API's thread (source creation's check). */
export async function checkSmbConnection(options: SmbConnectorOptions, deadlineMs = SMB_CHECK_DEADLINE_MS): Promise<void> {
  await onCheckThread((calls) => calls.call("test", options), deadlineMs);
}

/** Every disk share with its first-level names, off the API's thread. */
export function listSmbShares(options: SmbConnectorOptions, deadlineMs = SMB_CHECK_DEADLINE_MS): Promise<ShareListing> {
  return onCheckThread((calls) => calls.call("shareListing", options), deadlineMs);
}

/** Signs in as a person's Windows account, then its SID and groups (LSA, SAMR), off the API's thread: linking it. */
export function smbIdentity(options: SmbConnectorOptions, deadlineMs = SMB_CHECK_DEADLINE_MS): Promise<SmbIdentity> {
  return onCheckThread((calls) => calls.call("identity", options), deadlineMs);
}

/**
 * Linked accounts' groups asked with a source's own account (`options`), each batch of
 * refreshLinksOfServer on a check thread of its own ended at `deadlineMs`. A run's refresh waits
 * for a free thread rather than failing when people's checks hold them all: a run is nobody's
 * form to answer at once, and failing it would keep people in groups they left.
 */
export function threadGroupResolver(options: SmbConnectorOptions, deadlineMs = SMB_CHECK_DEADLINE_MS): GroupResolver {
  return { resolveGroups: (sids) => onCheckThread((calls) => calls.call("linkedGroups", options, sids), deadlineMs, { wait: true }) };
}

/**
 * Runs one SMB check on a thread of its own (smb-check.worker.ts) and ends the thread when it
 * answers or at `deadlineMs`, whichever comes first: share listing, source checks and account
 * links run off the API's thread, so a hostile server's loops and waits cannot slow the API's
 * answers, and a thread per check means one server cannot stall another user's check. With all
 * threads taken, a person's check answers 503 at once; a background one (`wait`) waits its turn.
 */
async function onCheckThread<T>(
  call: (calls: Caller<SmbCheckCalls>) => Promise<SmbCheckResult<T>>,
  deadlineMs: number,
  { wait = false }: { wait?: boolean } = {},
): Promise<T> {
  if (checksRunning < SMB_CHECKS_AT_ONCE) checksRunning++;
  else if (wait) await new Promise<void>((resolve) => waitingForThread.push(resolve));
  else throw new ServiceUnavailableError(`${SMB_CHECKS_AT_ONCE} SMB checks are under way already; try again in a few seconds`, CHECKS_BUSY_RETRY_S);
  try {
    return await checkOnNewThread(call, deadlineMs);
  } finally {
    // A waiting check takes this one's place (the count stays); else the place is free.
    const next = waitingForThread.shift();
    if (next) next();
    else checksRunning--;
  }
}

async function checkOnNewThread<T>(call: (calls: Caller<SmbCheckCalls>) => Promise<SmbCheckResult<T>>, deadlineMs: number): Promise<T> {
  const worker = new Worker(WORKER.file, {
    execArgv: WORKER.execArgv,
    resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB, maxOldGenerationSizeMb: CHECK_THREAD_OLD_GENERATION_MB },
  });
  const calls = new Caller<SmbCheckCalls>((message) => worker.postMessage(message));
  worker.on("message", (reply) => void calls.settle(reply));
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new SmbUnreachableError("timed_out", `The SMB server did not finish answering within ${deadlineMs / 1000} s; Sluice gave up`)),
      deadlineMs,
    );
  });
  const died = new Promise<never>((_, reject) => {
    worker.once("error", (error) => reject(new SmbUnreachableError("protocol_error", `The SMB check stopped: ${error.message}`)));
    worker.once("exit", (code) => reject(new SmbUnreachableError("protocol_error", `The SMB check stopped (thread exit ${code})`)));
  });
  try {
    const result = await Promise.race([call(calls), gaveUp, died]);
    if (!result.ok) throw fromCheckFailure(result.failure);
    return result.value;
  } finally {
    clearTimeout(timer);
    // Whatever the thread was doing (a wait, a loop), it ends here.
    void worker.terminate();
  }
}
