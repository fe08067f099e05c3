import fs from "node:fs";
import { startSamba } from "../fixtures/samba";
import { sambaAcls } from "../fixtures/samba-acls";
import { startSluice, tempDir } from "../fixtures/sluice-server";
import { addSmbSource, client, createGroup, signUp, waitForJobEnd, type Request } from "../fixtures/http-client";
import { writeCorpus } from "./corpus";
import { cpuSeconds, median } from "./measure";

/**
 * Issue 33 item 6: a no-change re-run of an SMB source with the file server's permissions costs at
 * most 10 % more than a no-change re-run of a plain source of the same files. Both sources log in
 * to the same real Samba (NT ACLs through acl_xattr, every file with a descriptor of its own,
 * written by smbcacls' propagation) as its administrator, are ingested once, then re-run in pairs,
 * the order alternating so a slow spell of the machine falls on both sides. Each run's time is its
 * job's own (started_at to completed_at), the figure the median of the pairs' ratios.
 * Run directly: `node dist/test/bench/permission-rerun.bench.js [files] [pairs]`.
 */

export interface PermissionRerunBenchOptions {
  files: number;
  pairs: number;
}

export interface PermissionRerunBenchResult {
  files: number;
  plainSeconds: number[];
  permittedSeconds: number[];
  /** CPU seconds of each run: the Sluice server's and smbd's (the connections' processes). */
  plainCpu: number[];
  permittedCpu: number[];
  /** Median of the pairs' permitted / plain ratios. */
  ratio: number;
  min: number;
  max: number;
  /** The permission re-run's job record of the median pair (timings, counts). */
  permittedJob: Record<string, any>;
}

/** Issue 33's target: a permission source's no-change re-run at most this many times a plain one's. */
export const PERMISSION_RERUN_TARGET = 1.1;

const READ = "0x001200a9";
/** Folders that get an entry of their own, so the run meets a few distinct ACLs, as a real share does. */
const FOLDERS_WITH_THEIR_OWN_ACL = ["dept-1", "dept-2", "dept-3"];

export async function runPermissionRerunBench(options: PermissionRerunBenchOptions): Promise<PermissionRerunBenchResult> {
  const corpusDir = tempDir("sluice-perm-rerun-");
  fs.chmodSync(corpusDir, 0o755); // smbd opens files as the connecting user's uid
  const corpus = await writeCorpus(corpusDir, { textFiles: options.files, binaryFiles: 0 });
  for (const entry of fs.readdirSync(corpusDir, { withFileTypes: true })) if (entry.isDirectory()) fs.chmodSync(`${corpusDir}/${entry.name}`, 0o755);
  const samba = await startSamba({ ntAcls: true, extraShares: { corpus: corpusDir } });
  const acls = await sambaAcls(samba);
  const server = await startSluice({ env: { SMB_TIMEOUT_MS: "15000" } });
  try {
    await acls.propagateAce("corpus", "", `ACL:S-1-1-0:ALLOWED/0x3/${READ}`);
    for (const folder of FOLDERS_WITH_THEIR_OWN_ACL) {
      if (fs.existsSync(`${corpusDir}/${folder}`)) await acls.propagateAce("corpus", folder, `ACL:S-1-5-32-545:ALLOWED/0x3/${READ}`);
    }
    const request = client(server.api);
    const user = await signUp(request, "bench");
    const group = await createGroup(request, user.token, "bench");
    const admin = { username: samba.adminUsername, password: samba.adminPassword, port: samba.port };
    const addSource = async (name: string, sourcePermissions: boolean) =>
      (await addSmbSource(request, user.token, group, admin, name, { source_permissions: sourcePermissions })).pipeline.id;
    const plain = await addSource("Corpus, plain", false);
    const permitted = await addSource("Corpus, file-server permissions", true);
    for (const pipeline of [plain, permitted]) await runOnce(request, user.token, pipeline, corpus.files);
    const plainSeconds: number[] = [];
    const permittedSeconds: number[] = [];
    const plainCpu: number[] = [];
    const permittedCpu: number[] = [];
    const cpuNow = () => cpuSeconds(server.child.pid!) + samba.clientPids().reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    const jobs: Array<Record<string, any>> = [];
    for (let i = 0; i < options.pairs; i++) {
      process.stdout.write(`no-change re-runs, pair ${i + 1} of ${options.pairs}...\n`);
      const order = i % 2 === 0 ? [plain, permitted] : [permitted, plain];
      for (const pipeline of order) {
        const before = cpuNow();
        const { seconds, job } = await runOnce(request, user.token, pipeline, corpus.files, true);
        const cpu = cpuNow() - before;
        if (pipeline === plain) {
          plainSeconds.push(seconds);
          plainCpu.push(cpu);
        } else {
          permittedSeconds.push(seconds);
          permittedCpu.push(cpu);
          jobs.push(job);
        }
      }
    }
    const ratios = permittedSeconds.map((s, i) => s / plainSeconds[i]);
    const ratio = median(ratios);
    return {
      files: corpus.files,
      plainSeconds,
      permittedSeconds,
      plainCpu,
      permittedCpu,
      ratio,
      min: Math.min(...ratios),
      max: Math.max(...ratios),
      permittedJob: jobs[ratios.indexOf(ratio)] ?? jobs[0],
    };
  } finally {
    await server.stop();
    await acls.close();
    await samba.stop();
    fs.rmSync(corpusDir, { recursive: true, force: true });
  }
}

/** Triggers a run and waits for its end; its time is the job's own. A re-run must have read no content. */
async function runOnce(request: Request, token: string, pipelineId: string, files: number, rerun = false): Promise<{ seconds: number; job: Record<string, any> }> {
  const trigger = await request("POST", `/data_pipelines/${pipelineId}/ingest`, { token });
  if (trigger.status !== 202) throw new Error(`trigger failed: ${trigger.text}`);
  const job = await waitForJobEnd(request, token, pipelineId, 600_000);
  if (job.status !== "completed") throw new Error(`ingestion failed: ${JSON.stringify(job)}`);
  if (job.entities_failed !== 0) throw new Error(`files failed: ${JSON.stringify(job.errors)}`);
  if (rerun && (job.files_unchanged < files || job.bytes_processed !== 0)) throw new Error(`not a no-change re-run: ${JSON.stringify(job)}`);
  const seconds = (Date.parse(`${job.completed_at}Z`) - Date.parse(`${job.started_at}Z`)) / 1000;
  return { seconds, job };
}

if (require.main === module) {
  const files = Number(process.argv[2] ?? 2000);
  const pairs = Number(process.argv[3] ?? 5);
  runPermissionRerunBench({ files, pairs })
    .then((r) => process.stdout.write(`${JSON.stringify({ ...r, permittedJob: { timings: r.permittedJob.timings } }, null, 2)}\n`))
    .catch((error: unknown) => {
      process.stderr.write(`${(error as Error).stack}\n`);
      process.exit(1);
    });
}
