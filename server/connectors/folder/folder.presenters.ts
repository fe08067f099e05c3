import type { DataSourceRecord } from "../../data/entities/data-source.entity";
import type { Pipeline } from "../../data/entities/pipeline.entity";
import { presentDataSource } from "../../routing/data-sources.presenters";
import { presentPipeline } from "../../routing/pipelines.presenters";
import type { FolderSourceRecord } from "./folder-source.entity";

export function presentFolderSource(folder: FolderSourceRecord) {
  return { data_source_id: folder.dataSourceId, path: folder.path };
}

/** Whether the kind is on, and the roots a path must lie inside (so the form can say so). */
export function presentFolderStatus(roots: string[]) {
  return { enabled: roots.length > 0, roots };
}

/** POST /data_sources/folder/{group_id}: the source, its folder and its auto-provisioned pipeline. */
export function presentCreatedFolderSource(created: { source: DataSourceRecord; details: FolderSourceRecord; pipeline: Pipeline }) {
  return { data_source: presentDataSource(created.source), folder_source: presentFolderSource(created.details), pipeline: presentPipeline(created.pipeline) };
}
