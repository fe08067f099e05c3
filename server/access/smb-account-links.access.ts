import type { EntityManager } from "typeorm";
import { SmbAccountLink } from "../data/entities/smb-account-link.entity";
import { NotFoundError } from "../errors";
import type { Actor } from "./actor";

/** A Windows account link is its user's alone: another user's id answers 404 like a missing one. */
export async function requireOwnSmbAccountLink(db: EntityManager, actor: Actor, id: string): Promise<SmbAccountLink> {
  const link = await db.findOne(SmbAccountLink, { where: { id, userId: actor.userId } });
  if (!link) throw new NotFoundError("Windows account link not found");
  return link;
}
