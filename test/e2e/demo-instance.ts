/**
 * A Sluice with something on every screen, for the accessibility walk and `npm run screenshots`:
 * the real server, a folder source over real files (no Samba needed), the fake Ollama for the
 * Models screen. Seeding goes through the API with the page's own cookie.
 */
import fs from "node:fs";
import path from "node:path";
import type { APIRequestContext } from "playwright-core";
import { startFakeOllama, type FakeOllama } from "../fixtures/fake-ollama";
import { startSluice, tempDir, type SluiceServer } from "../fixtures/sluice-server";
import { waitFor } from "../fixtures/wait-for";

export interface DemoInstance {
  sluice: SluiceServer;
  ollama: FakeOllama;
  /** The folder sources may read (FOLDER_SOURCE_ROOTS), with a docs/ folder of notes in it. */
  root: string;
  stop(): Promise<void>;
}

export const DEMO_PHRASE = "lighthouse";
/** No document has every word of it: the results are for any of them, and the page says so. */
export const DEMO_ANY_WORDS = "lighthouse keeper zebra";

export async function startDemoInstance(env: Record<string, string> = {}): Promise<DemoInstance> {
  const root = fs.realpathSync(tempDir("sluice-demo-root-"));
  const docs = path.join(root, "docs");
  fs.mkdirSync(docs);
  for (const [name, text] of [
    ["harbour log.txt", `Every evening the ${DEMO_PHRASE} keeper writes down each ferry that passed.`],
    ["keeper handbook.txt", `How to trim the ${DEMO_PHRASE} lamp, and whom to call when the fog horn fails.`],
    ["crew list.txt", "Ada, captain. Bo, engineer. Cy, cook."],
  ])
    fs.writeFileSync(path.join(docs, name), `${text}\n`);
  // One in a folder: search results show it, and the folder filter has something to narrow to.
  fs.mkdirSync(path.join(docs, "reports"));
  fs.writeFileSync(path.join(docs, "reports", "fog horn report.txt"), "The fog horn failed twice in March; the keeper called the harbour office both times.\n");
  const ollama = await startFakeOllama();
  const sluice = await startSluice({ env: { FOLDER_SOURCE_ROOTS: root, OLLAMA_HOST: ollama.url, ...env } });
  return {
    sluice,
    ollama,
    root,
    stop: async () => {
      await sluice.stop();
      await ollama.close();
    },
  };
}

async function ok<T>(response: Promise<{ ok(): boolean; status(): number; text(): Promise<string>; json(): Promise<unknown> }>): Promise<T> {
  const res = await response;
  if (!res.ok()) throw new Error(`${res.status()}: ${await res.text()}`);
  return (res.status() === 204 ? undefined : await res.json()) as T;
}

/** For the signed-in user of `request`: a group, a folder source on docs/ ingested into its collection. */
export async function seedDemoData(
  request: APIRequestContext,
  demo: DemoInstance,
  names: { group: string; source: string },
): Promise<{ groupId: string; collectionId: string; collectionName: string; pipelineId: string }> {
  const base = demo.sluice.api;
  const { created_group_id: groupId } = await ok<{ created_group_id: string }>(
    request.post(`${base}/user_groups`, { data: { group_name: names.group, group_permission: "write" } }),
  );
  const created = await ok<{ pipeline: { id: string; collection_id: string } }>(
    request.post(`${base}/data_sources/folder/${groupId}`, {
      data: { data_source: { data_source_name: names.source }, folder_source: { path: path.join(demo.root, "docs") } },
    }),
  );
  await ok(request.post(`${base}/data_pipelines/${created.pipeline.id}/ingest`));
  let status: { status?: string } | null = null;
  await waitFor(
    async () => {
      status = await ok<{ status?: string } | null>(request.get(`${base}/data_pipelines/${created.pipeline.id}/ingest/status`));
      if (status?.status === "failed") throw new Error(`the demo ingestion ended as ${JSON.stringify(status)}`);
      return status?.status === "completed";
    },
    () => `the demo ingestion to complete (last status: ${JSON.stringify(status)})`,
  );
  const collections = await ok<{ id: string; name: string }[]>(request.get(`${base}/collections`));
  const collectionName = collections.find((c) => c.id === created.pipeline.collection_id)!.name;
  return { groupId, collectionId: created.pipeline.collection_id, collectionName, pipelineId: created.pipeline.id };
}
