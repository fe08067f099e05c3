import type { SmbAccountLink } from "../data/entities/smb-account-link.entity";
import { isoNoZone } from "../time";

/** A Windows account link. There is no password to leave out: none was ever kept. */
export function presentSmbAccountLink(link: SmbAccountLink) {
  return {
    id: link.id,
    data_source_id: link.dataSourceId,
    server: link.server,
    account: link.account,
    sid: link.sid,
    group_sids: link.groupSids,
    groups: link.groups,
    checked_at: isoNoZone(link.checkedAt),
  };
}
