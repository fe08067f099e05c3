import type { Connector } from "./connector";
import { FolderConnector } from "./folder/folder.connector";
import type { FolderRules } from "./folder/folder-rules";
import { SmbConnector, type SmbConnectorOptions } from "./smb/smb.connector";

/**
 * A stored source as plain data an ingestion job's own thread can open a connector from, with
 * everything from the database and the secret store already looked up on the API's thread.
 * A kind without one (Google Drive: its tokens refresh through the secret store) runs its jobs
 * on the API's thread.
 */
export type ThreadConnectorSpec = { kind: "folder"; folder: string; rules: FolderRules } | { kind: "smb"; options: SmbConnectorOptions };

export function openThreadConnector(spec: ThreadConnectorSpec): Connector {
  switch (spec.kind) {
    case "folder":
      return new FolderConnector(spec.folder, spec.rules);
    case "smb":
      return new SmbConnector(spec.options);
  }
}
