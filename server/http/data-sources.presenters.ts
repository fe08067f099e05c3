import type { DataSourceRecord } from "../data/entities/data-source.entity";
import type { SmbSourceRecord } from "../data/entities/smb-source.entity";
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

/** The password is not a column here and never will be: it lives in the secret store. */
export function presentSmbSource(smb: SmbSourceRecord) {
  return {
    data_source_id: smb.dataSourceId,
    remote_system_username: smb.remoteSystemUsername,
    remote_system_name: smb.remoteSystemName,
    local_system_name: smb.localSystemName,
    default_ip: smb.defaultIp,
    port: smb.port,
  };
}
