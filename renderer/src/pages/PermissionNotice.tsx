import { useQuery } from "@tanstack/react-query";
import type * as api from "../api";
import { queries } from "../api";
import { href } from "../navigation";

/**
 * Whose permissions decide what a collection shows (issue 33 item 7): for each file server whose
 * permission source feeds it, the caller's linked Windows account there, or Everyone's files and
 * the way to link one. Nothing for a collection whose sources all show every file.
 */
export function PermissionNotice({ collection }: { collection: api.Collection }) {
  const servers = collection.file_server_permissions.map((entry) => entry.server);
  const links = useQuery({ ...queries.smbAccounts(), enabled: servers.length > 0 });
  if (servers.length === 0 || !links.data) return null;
  const several = servers.length > 1;
  return (
    <div className="notice permission-notice" data-testid="permission-notice">
      {servers.map((server) => {
        const link = links.data.find((l) => l.server === server);
        const where = several ? `On ${server}, you` : "You";
        return (
          <p key={server}>
            {link ? (
              <>
                {where} see the files <strong>{link.account}</strong> may read.
              </>
            ) : (
              <>
                {where} see only the files everyone may read. <a href={href("windows-accounts")}>Link your Windows account</a>
              </>
            )}
          </p>
        );
      })}
    </div>
  );
}
