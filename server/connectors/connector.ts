import type { Readable } from "node:stream";
import type { Dacl, FileAcl } from "../search/stored-acl";

/** One file or folder on a remote source. Paths are "/"-separated and relative to the source root. */
export interface RemoteEntry {
  /** Full path from the source root, e.g. "share/folder/file.txt" for SMB, the file id for a drive. */
  path: string;
  name: string;
  isDirectory: boolean;
  size: number;
  modifiedAt: Date;
  /** A provider revision (drive) when size + mtime are not the change signal. */
  version?: string;
  mimeType?: string;
  /**
   * Set when the connector will not open this entry (a link leading out of a folder source):
   * ingestion lists it as a failed file with this message and reads nothing.
   */
  refused?: string;
  /** SMB ChangeTime: moves when the content, the attributes or the security descriptor change (the SMB connector sets it). */
  changedAt?: Date;
}

/**
 * What ingestion and the API need from any kind of source. A new kind is a new
 * folder under connectors/ (see source-kind.ts) registered in registry.ts, never edits elsewhere.
 */
export interface Connector {
  /** What the root's entries are called in messages ("share" for SMB); "folder" when unset. */
  readonly topLevelName?: string;
  /** Connects and authenticates; throws ConnectorAuthError or ConnectorUnreachableError. */
  test(): Promise<void>;
  /** The direct children of a folder ("" is the root). */
  list(path: string): Promise<RemoteEntry[]>;
  stat(path: string): Promise<RemoteEntry>;
  /**
   * A stream of the file's bytes; never buffers the whole file. `expectedSize`, the size a
   * listing gave, is a hint a connector may use to read small files faster. Each chunk is the
   * reader's once yielded: the connector keeps no view of its memory, so the reader may free it
   * at once (releaseBytes in owned-bytes.ts; Node's file streams and the SMB client qualify).
   */
  read(path: string, expectedSize?: number): Promise<Readable>;
  /**
   * Who may read the file: its DACL (SMB2 QUERY_INFO on a READ_CONTROL-only open) and its share's
   * (NetrShareGetInfo level 502, cached per share). SMB only; an unreadable descriptor is a ConnectorEntryError.
   */
  readPermissions?(path: string): Promise<FileAcl>;
  /**
   * The DACL of the share holding the path, as readPermissions puts it in FileAcl.share (the same
   * cached read). SMB only; what lets a run leave an unchanged file's descriptor unread (decision 0485).
   */
  readSharePermissions?(path: string): Promise<Dacl>;
  close(): Promise<void>;
}

/** The credentials were refused (bad user name or password). */
export class ConnectorAuthError extends Error {
  constructor(message = "Authentication failed") {
    super(message);
    this.name = "ConnectorAuthError";
  }
}

/** The server could not be reached, did not answer in time, or is not speaking the protocol. */
export class ConnectorUnreachableError extends Error {
  constructor(message = "Source unreachable") {
    super(message);
    this.name = "ConnectorUnreachableError";
  }
}

/** A single path could not be opened or read (permissions, vanished file); not fatal for a job. */
export class ConnectorEntryError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
    this.name = "ConnectorEntryError";
  }
}
