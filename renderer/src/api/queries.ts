/**
 * What the screens read, as TanStack Query options: one cache key per resource, so a change made
 * on one screen shows on every screen that lists it (mutations invalidate the keys they change),
 * and polling is `refetchInterval`, stopped by the data itself.
 */
import { QueryClient, keepPreviousData, queryOptions, type QueryKey } from "@tanstack/react-query";
import { api, answer } from "./client";

export const queryClient = new QueryClient({
  defaultOptions: {
    // A failure is shown at once, next to what failed; the user retries (as before the cache).
    queries: { retry: false, refetchOnWindowFocus: false },
    mutations: { retry: false },
  },
});

/** Marks every query under these keys stale and refetches the ones on screen; resolves once they have answered. */
export function invalidate(...keys: QueryKey[]): Promise<unknown> {
  return Promise.all(keys.map((queryKey) => queryClient.invalidateQueries({ queryKey })));
}

/** A new or deleted source adds or removes its collection and pipeline too. */
export function invalidateSourceLists(): Promise<unknown> {
  return invalidate(keys.sources, keys.collections, keys.pipelines);
}

export const keys = {
  me: ["me"] as const,
  apiKeys: ["api_keys"] as const,
  audit: ["audit"] as const,
  instance: ["instance"] as const,
  health: ["health"] as const,
  groups: ["groups"] as const,
  collections: ["collections"] as const,
  sources: ["data_sources"] as const,
  pipelines: ["pipelines"] as const,
  models: ["models"] as const,
  myModels: ["my_models"] as const,
  modelServer: ["model_server"] as const,
  drive: ["drive"] as const,
  conversations: (collectionId: string) => ["conversations", collectionId] as const,
  invitations: ["invitations"] as const,
  signup: ["signup"] as const,
  smbAccounts: ["smb_accounts"] as const,
};

/** While a run is going its state is read this often; once it ends, no more. */
const JOB_POLL_MS = 1000;
/** After a failed read of a job's state, the next try waits longer. */
const JOB_RETRY_MS = 3000;
/** While the model server is down the page asks again this often, so starting it is noticed without a reload. */
const MODEL_SERVER_RECHECK_MS = 10_000;
/** Free space changes slowly, and health is cheap. */
const DISK_POLL_MS = 60_000;

export const queries = {
  me: () => queryOptions({ queryKey: keys.me, queryFn: () => answer(api.GET("/users/me")).catch(() => null), staleTime: Number.POSITIVE_INFINITY }),
  /** Whether the viewer may change this instance's settings (the desktop user at its own machine); asked once per page load. */
  instance: () => queryOptions({ queryKey: keys.instance, queryFn: () => answer(api.GET("/instance")), staleTime: Number.POSITIVE_INFINITY }),
  /** How this instance lets people sign up, and the invitation a link's token names (404/410 as errors). */
  signup: (invitation: string | null) =>
    queryOptions({ queryKey: [...keys.signup, invitation], queryFn: () => answer(api.GET("/signup", { params: { query: invitation ? { invitation } : {} } })) }),
  /** Administrators only. */
  invitations: () => queryOptions({ queryKey: keys.invitations, queryFn: () => answer(api.GET("/invitations")) }),
  /** DATA_DIR's free space, for the low-disk banner. */
  health: () => queryOptions({ queryKey: keys.health, queryFn: () => answer(api.GET("/health")), refetchInterval: DISK_POLL_MS }),
  apiKeys: () => queryOptions({ queryKey: keys.apiKeys, queryFn: () => answer(api.GET("/users/me/api_keys")) }),
  /** One page of the audit trail; `before` is the `next` of the page before. */
  audit: (before: string | null) =>
    queryOptions({
      queryKey: [...keys.audit, before],
      queryFn: () => answer(api.GET("/audit", { params: { query: { limit: 50, ...(before ? { before } : {}) } } })),
      retry: false,
    }),
  groups: () => queryOptions({ queryKey: keys.groups, queryFn: () => answer(api.GET("/user_groups")) }),
  groupTree: () => queryOptions({ queryKey: [...keys.groups, "tree"], queryFn: () => answer(api.GET("/user_groups/tree")) }),
  collections: () => queryOptions({ queryKey: keys.collections, queryFn: () => answer(api.GET("/collections")) }),
  documents: (id: string, offset: number, limit: number) =>
    queryOptions({
      queryKey: [...keys.collections, id, "documents", offset, limit],
      queryFn: () => answer(api.GET("/collections/{id}/documents", { params: { path: { id }, query: { offset, limit } } })),
      // The page shown stays until the next one has arrived.
      placeholderData: keepPreviousData,
    }),
  sources: () => queryOptions({ queryKey: keys.sources, queryFn: () => answer(api.GET("/data_sources")) }),
  folderStatus: () => queryOptions({ queryKey: [...keys.sources, "folder"], queryFn: () => answer(api.GET("/data_sources/folder")) }),
  shares: (id: string) =>
    queryOptions({ queryKey: [...keys.sources, id, "shares"], queryFn: () => answer(api.GET("/data_sources/smb/list/{id}", { params: { path: { id } } })) }),
  drive: () => queryOptions({ queryKey: keys.drive, queryFn: () => answer(api.GET("/integrations/cloud/drive")) }),
  pipelines: () => queryOptions({ queryKey: keys.pipelines, queryFn: () => answer(api.GET("/data_pipelines")) }),
  jobs: (id: string) => queryOptions({ queryKey: [...keys.pipelines, id, "jobs"], queryFn: () => answer(api.GET("/data_pipelines/{id}/jobs", { params: { path: { id } } })) }),
  /** The latest job, or null when the pipeline never ran (202 with a detail); polled while it runs. */
  ingestStatus: (id: string) =>
    queryOptions({
      queryKey: [...keys.pipelines, id, "status"],
      queryFn: async () => {
        const { data, response } = await api.GET("/data_pipelines/{id}/ingest/status", { params: { path: { id } } });
        return response.status === 202 || !data || !("job_id" in data) ? null : data;
      },
      refetchInterval: (query) => (query.state.status === "error" ? JOB_RETRY_MS : query.state.data?.status === "processing" ? JOB_POLL_MS : false),
    }),
  models: () => queryOptions({ queryKey: keys.models, queryFn: () => answer(api.GET("/models")) }),
  myModels: () => queryOptions({ queryKey: keys.myModels, queryFn: () => answer(api.GET("/models/my")) }),
  /** The model server's status, asked again every few seconds while it is down. */
  modelServer: () =>
    queryOptions({
      queryKey: keys.modelServer,
      queryFn: () => answer(api.GET("/models/server")),
      refetchInterval: (query) => (query.state.data?.reachable === false ? MODEL_SERVER_RECHECK_MS : false),
    }),
  library: (q: string, topK = 10) =>
    queryOptions({
      queryKey: [...keys.models, "library", q, topK],
      queryFn: async ({ signal }) => {
        const found = await answer(api.GET("/models/library/search", { params: { query: { q, top_k: topK } }, signal }));
        return Array.isArray(found) ? found : (found.results ?? []);
      },
      enabled: q !== "",
      // The last answer stays in view while the next query's is fetched.
      placeholderData: keepPreviousData,
    }),
  /** The caller's linked Windows accounts (GET /users/me/smb_accounts). */
  smbAccounts: () => queryOptions({ queryKey: keys.smbAccounts, queryFn: () => answer(api.GET("/users/me/smb_accounts")) }),
  conversations: (collectionId: string) =>
    queryOptions({
      queryKey: keys.conversations(collectionId),
      queryFn: () => answer(api.GET("/collections/{id}/conversations", { params: { path: { id: collectionId } } })),
    }),
};
