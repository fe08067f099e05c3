import type { FolderSourceRecord } from "./folder-source.entity";

export function presentFolderSource(folder: FolderSourceRecord) {
  return { data_source_id: folder.dataSourceId, path: folder.path };
}

/** Whether the kind is on, and the roots a path must lie inside (so the form can say so). */
export function presentFolderStatus(roots: string[]) {
  return { enabled: roots.length > 0, roots };
}
