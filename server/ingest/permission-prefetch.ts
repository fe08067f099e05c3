import type { RemoteEntry } from "../connectors/connector";
import type { DocumentPermissions } from "../search/search-index";
import type { PermissionReader } from "./permission-updates";

/**
 * The permissions of files whose content is unchanged, read while the source is still being
 * listed (issue 33 item 6, decision 0482). A re-run reads such a file's descriptor again, one
 * compound round trip each (decision 0304), unless its change time says it stayed (0485); started as each file is discovered, at most
 * READS_IN_FLIGHT at once on the source's one connection, they overlap the listing's round trips
 * and one another instead of waiting for the whole listing and then for file slots.
 */

/** Descriptor reads in flight at once: each holds three SMB2 credits and a few hundred bytes. */
export const READS_IN_FLIGHT = 64;

interface Entry {
  file: RemoteEntry;
  result: Promise<DocumentPermissions> | null;
}

export class PermissionPrefetch {
  private readonly entries = new Map<string, Entry>();
  private readonly queue: Entry[] = [];
  private inFlight = 0;
  private stopped = false;

  constructor(
    private readonly read: PermissionReader,
    private readonly limit = READS_IN_FLIGHT,
  ) {}

  /** A discovered file whose content is unchanged: its permissions are read as soon as a place is free. */
  offer(file: RemoteEntry): void {
    if (this.stopped || this.entries.has(file.path)) return;
    const entry: Entry = { file, result: null };
    this.entries.set(file.path, entry);
    this.queue.push(entry);
    this.pump();
  }

  /** The file's permissions: the read started for it (taken once), or a read now. */
  readonly reader: PermissionReader = (file) => {
    const entry = this.entries.get(file.path);
    if (!entry) return this.read(file);
    this.entries.delete(file.path);
    return entry.result ?? this.start(entry);
  };

  /** No more reads start (the walk failed, or the run is over); those under way end on their own. */
  stop(): void {
    this.stopped = true;
    this.queue.length = 0;
    this.entries.clear();
  }

  private pump(): void {
    while (!this.stopped && this.inFlight < this.limit && this.queue.length > 0) {
      const entry = this.queue.shift()!;
      if (entry.result === null) this.start(entry);
    }
  }

  private start(entry: Entry): Promise<DocumentPermissions> {
    this.inFlight += 1;
    const result = this.read(entry.file);
    entry.result = result;
    // The run takes the result (and its failure) when it reaches the file; until then a failure is held, not thrown.
    result.catch(() => undefined).finally(() => {
      this.inFlight -= 1;
      this.pump();
    });
    return result;
  }
}
