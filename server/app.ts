import fs from "node:fs";
import { CollectionRetrieval } from "./collections/collection-retrieval";
import { DocumentPermissions } from "./access/document-permissions";
import { sidsOfUser } from "./accounts/smb-account-links";
import { OllamaClient } from "./llm/ollama.client";
import type { VectorStore } from "./search/vector-store";
import path from "node:path";
import cookieParser from "cookie-parser";
import express, { type Express } from "express";
import type { Redis } from "ioredis";
import type { DataSource } from "typeorm";
import { isLoopbackHost, type Config, type Mode } from "./config";
import type { Logger } from "./logger";
import type { SecretStore } from "./secrets/secrets";
import { AccountsService } from "./accounts/accounts.service";
import { IdentityProvider } from "./accounts/identity-provider";
import { MemoryAttemptStore, type AttemptStore } from "./accounts/attempt-store";
import { DEFAULT_ACCOUNT_LIMITS, SignInLimiter } from "./accounts/sign-in-limiter";
import { TokenService } from "./accounts/tokens";
import { ApiKeysService } from "./accounts/api-keys.service";
import { Authenticator } from "./accounts/authenticator";
import { PasswordHasher } from "./accounts/password-hasher";
import { AuditLog } from "./audit/audit";
import { apiKeysRoutes } from "./http/api-keys.routes";
import { auditRoutes } from "./http/audit.routes";
import { driveAccessKey, driveRefreshKey } from "./connectors/gdrive/drive-grant.entity";
import { CollectionsService } from "./collections/collections.service";
import type { KindRegistry } from "./connectors/registry";
import type { IngestQueue } from "./ingest/job-queue";
import { IngestService } from "./ingest/ingest.service";
import { ingestRoutes } from "./http/ingest.routes";
import { modelsRoutes } from "./http/models.routes";
import { askRoutes } from "./http/ask.routes";
import { AskService } from "./ask/ask.service";
import type { ModelsService } from "./llm/models.service";
import type { SearchIndex } from "./search/search-index";
import { SourcesService } from "./sources/sources.service";
import { PipelinesService } from "./pipelines/pipelines.service";
import { SchedulesService } from "./schedules/schedules.service";
import { clockOf } from "./schedules/clock";
import { dataSourcesRoutes } from "./http/data-sources.routes";
import { pipelinesRoutes } from "./http/pipelines.routes";
import { GroupsService } from "./groups/groups.service";
import { accountsRoutes } from "./http/accounts.routes";
import { requireAuth } from "./routing/auth.middleware";
import { refuseCrossSite } from "./http/cross-site.middleware";
import { AllowedHosts, hostGuard } from "./http/host-guard.middleware";
import { securityHeaders } from "./http/security-headers";
import { cookieSecurity } from "./routing/transport-security";
import type { CertificateSummary } from "./tls/tls-credentials";
import { collectionsRoutes } from "./http/collections.routes";
import { errorHandler, notFound } from "./http/error.middleware";
import { groupsRoutes } from "./http/groups.routes";
import { openApiDocument, type OpenApiDocument } from "./http/openapi";
import { requestLog } from "./http/request-log.middleware";
import { serviceRoutes } from "./http/service.routes";
import { usersRoutes } from "./http/users.routes";
import { instanceRoutes } from "./http/instance.routes";
import { readinessRoutes } from "./health";
import { InstanceRoles } from "./access/instance-roles";
import { InvitationsService } from "./accounts/invitations.service";
import { invitationsRoutes } from "./http/invitations.routes";
import { smbAccountsRoutes } from "./http/smb-accounts.routes";
import { smbConnectAttempts } from "./connectors/smb/smb-connect-limiter";
import { SmbAccountLinks } from "./connectors/smb/smb-account-links.service";
import { smbSettingsOf } from "./connectors/smb/smb.kind";

export interface AppDeps {
  config: Config;
  /** What the composition root built this process on (composition/compose.ts: modeOf). */
  mode: Mode;
  /** The address browsers use: PUBLIC_URL, or the one the server listens on. */
  publicUrl: string;
  /** The certificate served when this process speaks HTTPS itself (TLS_CERT); null over plain HTTP. */
  tls: CertificateSummary | null;
  db: DataSource;
  secrets: SecretStore;
  logger: Logger;
  index: SearchIndex;
  /** The source kinds (connectors/registry.ts); each brings its own routes. */
  kinds: KindRegistry;
  queue: IngestQueue;
  vectors: VectorStore;
  /** Where sign-in and sign-up attempts are counted: Redis in team mode; default: in memory. */
  attemptStore?: AttemptStore;
  models: ModelsService;
  /** Team mode's Redis connection, for the readiness check. */
  redis?: Redis | null;
}

const BODY_LIMIT = "1mb";
/** The built React UI, served at / when it exists (renderer/dist after `npm run build`). */
const RENDERER_DIST = path.resolve(__dirname, __filename.endsWith(".ts") ? ".." : "../..", "renderer", "dist");

export async function createApp({ config, mode, publicUrl, tls, db, secrets, logger, index, vectors, kinds, queue, models, attemptStore, redis }: AppDeps): Promise<Express> {
  const tokens = await TokenService.open(secrets, config.jwtSecret);
  const attempts = attemptStore ?? new MemoryAttemptStore();
  const limiter = new SignInLimiter(attempts, {
    ...DEFAULT_ACCOUNT_LIMITS,
    signUpsPerAddress: { ...DEFAULT_ACCOUNT_LIMITS.signUpsPerAddress, limit: config.signUpsPerHour },
    everyone: { ...DEFAULT_ACCOUNT_LIMITS.everyone, limit: config.signInsPerMinute },
  });
  // A LAN server, or one with named administrators, keeps instance-wide actions to administrators.
  const roles = new InstanceRoles(db, config.adminEmails, config.adminEmails.length > 0 || !isLoopbackHost(config.host));
  if (!isLoopbackHost(config.host) && config.adminEmails.length === 0) {
    logger.warn(`HOST=${config.host} is reachable from the LAN and ADMIN_EMAILS is not set: the first account to sign up becomes this instance's administrator; set ADMIN_EMAILS to name the administrators`);
  }
  const invitations = new InvitationsService(db, roles, { mode: config.signup, domains: config.signupDomains }, publicUrl);
  const hasher = new PasswordHasher({ threads: config.passwordHashThreads, queueLimit: config.passwordHashQueue, holdFile: config.testHoldHashingFile });
  const audit = new AuditLog(db, config.auditDays);
  const apiKeys = new ApiKeysService(db);
  const authenticator = new Authenticator(db, tokens, apiKeys);
  const authenticate = (token: string) => authenticator.authenticate(token);
  // A deleted account's Drive tokens go with its grant row (the row cascades; the secret store does not).
  const forgetDriveTokens = async (userId: string) => {
    await secrets.delete(driveRefreshKey(userId));
    await secrets.delete(driveAccessKey(userId));
  };
  const accounts = new AccountsService(db, tokens, limiter, new IdentityProvider(config.idp), hasher, audit, { invitations, roles }, forgetDriveTokens);
  const groups = new GroupsService(db);
  const retrieval = new CollectionRetrieval(index, vectors, new OllamaClient(config.ollamaHost.replace(/\/$/, "")));
  // Each person's SIDs on a file server: their linked Windows account's, or Everyone's alone.
  const permissions = new DocumentPermissions(index, (userId, server) => sidsOfUser(db, userId, server));
  const collections = new CollectionsService(db, index, queue, retrieval, kinds, permissions);
  const sources = new SourcesService(db, secrets, kinds, index, queue);
  const pipelines = new PipelinesService(db);
  const schedules = new SchedulesService(db, clockOf(config));
  // One count for every route that connects to an SMB server as the caller asks: sources' and account links'.
  const smbConnects = smbConnectAttempts(config.smbConnectsPerMinute);
  const kindRoutes = kinds.all().map((kind) => kind.routes({ db, sources, publicUrl, roles, audit, smbConnectAttempts: smbConnects }));
  const secureCookies = cookieSecurity(publicUrl);

  const api = express.Router();
  // Before anything reads the body: a cross-site form post with the cookie acts on nothing.
  api.use(refuseCrossSite(publicUrl));
  api.use(express.json({ limit: BODY_LIMIT }));
  // The document describes the finished router, so it is built below, once every route is on it.
  let openApi: OpenApiDocument | undefined;
  api.use(serviceRoutes(() => openApi!, config.dataDir));
  api.use(readinessRoutes({ db, redis: redis ?? null, ollamaHost: config.ollamaHost }));
  api.use(accountsRoutes(accounts, authenticate, secureCookies, { invitations, mode: config.signup }));
  for (const routes of kindRoutes) if (routes.public) api.use(routes.public);
  api.use(requireAuth(authenticate));
  api.use(usersRoutes(accounts, secureCookies));
  api.use(apiKeysRoutes(apiKeys, audit));
  api.use(auditRoutes(audit, roles));
  api.use(smbAccountsRoutes(new SmbAccountLinks(db, smbSettingsOf(config), attempts), smbConnects));
  api.use(instanceRoutes(mode.database === "postgres", roles.guarded, tls));
  api.use(groupsRoutes(groups, invitations, audit));
  api.use(invitationsRoutes(invitations, audit));
  api.use(collectionsRoutes(collections, audit));
  api.use(dataSourcesRoutes(sources, schedules, audit));
  for (const routes of kindRoutes) api.use(routes.signedIn);
  api.use(pipelinesRoutes(pipelines, schedules));
  api.use(ingestRoutes(new IngestService(db, queue)));
  api.use(modelsRoutes(models, roles, audit));
  api.use(askRoutes(new AskService(db, retrieval, permissions, models.ollama, logger), models.options.keepAliveMs));
  api.use(notFound);
  openApi = openApiDocument(api);

  const app = express();
  app.disable("x-powered-by");
  // TRUST_PROXY: which proxies' X-Forwarded-For Express believes, so req.ip (the sign-in and sign-up limits' address) is the client's.
  app.set("trust proxy", config.trustProxy);
  app.set("query parser", "simple");
  // No ETag on answers sent with res.send/res.json: the API's are Cache-Control: no-store, so a
  // client never revalidates them, and hashing every body was work on the API's thread for
  // nothing (docs/decisions/0532-a-search-requests-fixed-cost.md). The UI's files keep theirs (express.static sets its own).
  app.set("etag", false);
  app.use(securityHeaders());
  app.use(requestLog(logger));
  // Against DNS rebinding: a name this server does not answer to is refused before any route.
  app.use(hostGuard(new AllowedHosts({ bindHost: config.host, publicUrl })));
  app.use(cookieParser());
  app.use("/api", api);
  if (fs.existsSync(path.join(RENDERER_DIST, "index.html"))) {
    // The UI routes with the URL hash, so only real files are served; anything else is a 404.
    app.use(express.static(RENDERER_DIST, { index: "index.html" }));
  }
  app.use(notFound);
  app.use(errorHandler(logger));
  return app;
}
