import type { DataSourceRecord } from "../../data/entities/data-source.entity";
import type { Pipeline } from "../../data/entities/pipeline.entity";
import { presentDataSource } from "../../routing/data-sources.presenters";
import { presentPipeline } from "../../routing/pipelines.presenters";
import type { SmbSourceRecord } from "./smb-source.entity";

/** The password is not a column here and never will be: it lives in the secret store. */
export function presentSmbSource(smb: SmbSourceRecord) {
  return {
    data_source_id: smb.dataSourceId,
    remote_system_username: smb.remoteSystemUsername,
    remote_system_name: smb.remoteSystemName,
    local_system_name: smb.localSystemName,
    default_ip: smb.defaultIp,
    port: smb.port,
    source_permissions: smb.sourcePermissions,
  };
}

/** POST /data_sources/smb/{group_id}: the source, its SMB details and its auto-provisioned pipeline. */
export function presentCreatedSmbSource(created: { source: DataSourceRecord; details: SmbSourceRecord; pipeline: Pipeline }) {
  return { data_source: presentDataSource(created.source), smb_source: presentSmbSource(created.details), pipeline: presentPipeline(created.pipeline) };
}
