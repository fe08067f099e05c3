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
