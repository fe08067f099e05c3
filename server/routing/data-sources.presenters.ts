import type { DataSourceRecord } from "../data/entities/data-source.entity";
import { isoNoZone } from "../time";

export function presentDataSource(source: DataSourceRecord) {
  return {
    id: source.id,
    data_source_name: source.name,
    kind: source.kind,
    owner_group_id: source.ownerGroupId,
    collection_id: source.autoCollectionId,
    created_at: isoNoZone(source.createdAt),
  };
}

/**
 * One item of GET /data_sources: the record, `smb_source` on every item (the spec's listing
 * field, null unless SMB), then what the source's kind adds (e.g. `folder_source`).
 */
export function presentListedSource(source: DataSourceRecord, kindDetails: Record<string, unknown> | undefined) {
  return { ...presentDataSource(source), smb_source: null, ...kindDetails };
}

/** POST /data_sources/{id}/schedules/pause and /resume. */
export function presentSchedulesChanged(dataSourceId: string, count: number) {
  return { data_source_id: dataSourceId, schedules_changed: count };
}
