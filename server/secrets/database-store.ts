import type { DataSource } from "typeorm";
import { StoredSecret } from "../data/entities/stored-secret.entity";
import { packSealed, seal, unpackSealed, unseal } from "./seal";
import { SecretStoreError, type SecretStore } from "./secret-store";

/** A row every process checks its key against, so a wrong SECRETS_KEY stops start-up instead of failing jobs later. */
const KEY_CHECK_NAME = "sluice-secrets-key-check";
const KEY_CHECK_VALUE = "this SECRETS_KEY opens the team's secrets";

/**
 * Team server secrets (DATABASE_URL): sealed with one key (SECRETS_KEY) and kept in the shared
 * database, so an SMB password stored through one API process can be read by a worker on
 * another machine. Secrets a server kept in its own keychain or file before it used this store
 * are found there on first read and moved in (nothing is lost on upgrade).
 */
export class DatabaseSecretStore implements SecretStore {
  readonly kind = "database" as const;

  private constructor(
    private readonly db: DataSource,
    private readonly key: Buffer,
    private readonly local: SecretStore,
  ) {}

  /** Opens the store, failing with a clear message when `key` is not the one the team's secrets are sealed with. */
  static async open(db: DataSource, key: Buffer, local: SecretStore): Promise<DatabaseSecretStore> {
    const store = new DatabaseSecretStore(db, key, local);
    await store.getOrCreate(KEY_CHECK_NAME, () => KEY_CHECK_VALUE);
    return store;
  }

  async get(name: string): Promise<string | null> {
    const row = await this.db.manager.findOne(StoredSecret, { where: { name: assertName(name) } });
    if (row) return this.open(name, row.sealed);
    const earlier = await this.local.get(name);
    return earlier === null ? null : this.getOrCreate(name, () => earlier);
  }

  async set(name: string, value: string): Promise<void> {
    const row = { name: assertName(name), sealed: this.seal(name, value), updatedAt: new Date() };
    await this.db.transaction((tx) => tx.createQueryBuilder().insert().into(StoredSecret).values(row).orUpdate(["sealed", "updated_at"], ["name"]).execute());
  }

  /** Atomic across processes: the first value inserted wins and every caller gets it. */
  async getOrCreate(name: string, make: () => string): Promise<string> {
    assertName(name);
    const sealed = await this.db.transaction(async (tx) => {
      const existing = await tx.findOne(StoredSecret, { where: { name } });
      if (existing) return existing.sealed;
      const row = { name, sealed: this.seal(name, make()), updatedAt: new Date() };
      await tx.createQueryBuilder().insert().into(StoredSecret).values(row).orIgnore().execute();
      return (await tx.findOneOrFail(StoredSecret, { where: { name } })).sealed;
    });
    return this.open(name, sealed);
  }

  async delete(name: string): Promise<void> {
    await this.db.transaction((tx) => tx.delete(StoredSecret, { name: assertName(name) }));
    // A copy left from before the team store must not come back on the next read.
    await this.local.delete(name);
  }

  private seal(name: string, value: string): string {
    if (typeof value !== "string") throw new SecretStoreError(`Secret "${name}" must be a string`);
    return packSealed(seal(this.key, name, value));
  }

  private open(name: string, packed: string): string {
    try {
      return unseal(this.key, name, unpackSealed(packed));
    } catch (error) {
      throw new SecretStoreError(
        `Secret "${name}" in the team database cannot be opened with this SECRETS_KEY: every API and worker process must run with the same SECRETS_KEY`,
        { cause: error },
      );
    }
  }
}

function assertName(name: string): string {
  if (typeof name !== "string" || name.length === 0) throw new SecretStoreError("Secret key must be a non-empty string");
  return name;
}
