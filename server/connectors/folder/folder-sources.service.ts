import type { Actor } from "../../access/actor";
import { BadRequestError, ServiceUnavailableError } from "../../errors";
import type { CreatedSource, SourceCreator } from "../source-kind";
import { checkSourceFolder, normaliseFolderPath } from "./folder-roots";
import { FOLDER_KIND_OFF, FolderPathError, type FolderRules } from "./folder-rules";
import { FolderSourceRecord } from "./folder-source.entity";

export interface NewFolderSource {
  name: string;
  path: string;
}

/** Folder sources: a folder on this machine, inside FOLDER_SOURCE_ROOTS, outside DATA_DIR. */
export class FolderSources {
  constructor(
    private readonly sources: SourceCreator,
    private readonly kindName: string,
    readonly rules: FolderRules,
  ) {}

  get roots(): string[] {
    return this.rules.roots;
  }

  /** 503 while the kind is off; the folder is checked (400, one answer for every folder refused: folderRefusal) before anything is stored. */
  create(actor: Actor, groupId: string, input: NewFolderSource): Promise<CreatedSource<FolderSourceRecord>> {
    if (this.roots.length === 0) throw new ServiceUnavailableError(FOLDER_KIND_OFF);
    return this.sources.create(actor, {
      kind: this.kindName,
      name: input.name,
      groupId,
      verify: async () => {
        try {
          await checkSourceFolder(input.path, this.rules);
        } catch (error) {
          if (error instanceof FolderPathError) throw new BadRequestError(`folder_source.${error.message}`);
          throw error;
        }
      },
      details: async (tx, sourceId) => {
        const folder = tx.create(FolderSourceRecord, { dataSourceId: sourceId, path: normaliseFolderPath(input.path) });
        await tx.insert(FolderSourceRecord, folder);
        return folder;
      },
    });
  }
}
