/**
 * A ranking that saw the collection's ACLs at another version than the one its caller's filter
 * was computed at (SearchFilter.aclVersion): the caller computes the filter at `version` and asks
 * again (access/document-permissions.ts), so a filter never meets ACLs it was not computed for
 * (docs/decisions/0503-acl-version-read-in-the-ranking.md).
 */
export class AclVersionMovedError extends Error {
  readonly code = "SLUICE_ACL_VERSION_MOVED";
  constructor(readonly version: string) {
    super(`The collection's permissions changed during the search (now at version ${version})`);
  }
}
