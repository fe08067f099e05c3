import type { User } from "../data/entities/user.entity";
import type { Group } from "../data/entities/group.entity";
import type { Collection } from "../data/entities/collection.entity";
import type { Pipeline } from "../data/entities/pipeline.entity";
import type { IngestJob } from "../data/entities/ingest-job.entity";
import type { DocumentSummary, SearchHit } from "../search/search-index";
import type { GroupListing, GroupTreeNode } from "../groups/groups.service";
import type { CollectionStats } from "../collections/collections.service";
import { isoNoZone } from "../time";

/** Entity -> JSON. Fields are picked one by one so a secret column can never leak by accident. */

export function presentUser(user: User) {
  return {
    id: user.id,
    email: user.email,
    display_name: user.displayName,
    avatar_url: user.avatarUrl,
    created_at: isoNoZone(user.createdAt),
    updated_at: isoNoZone(user.updatedAt),
    last_sign_in_at: isoNoZone(user.lastSignInAt),
  };
}

export function presentGroup(group: Group) {
  return {
    id: group.id,
    group_name: group.groupName,
    group_permission: group.groupPermission,
    parent_group_id: group.parentGroupId,
    created_at: isoNoZone(group.createdAt),
  };
}

export function presentGroupListing({ group, isMember, memberEmails }: GroupListing) {
  return { ...presentGroup(group), is_member: isMember, member_emails: memberEmails };
}

export interface TreeJson {
  id: string;
  group_name: string;
  group_permission: string;
  children: TreeJson[];
}

export function presentTree(node: GroupTreeNode): TreeJson {
  return {
    id: node.group.id,
    group_name: node.group.groupName,
    group_permission: node.group.groupPermission,
    children: node.children.map(presentTree),
  };
}

export function presentCollection(collection: Collection, stats: CollectionStats = { documentCount: 0, chunkCount: 0 }) {
  return {
    id: collection.id,
    name: collection.name,
    owner_group_id: collection.ownerGroupId,
    document_count: stats.documentCount,
    chunk_count: stats.chunkCount,
    created_at: isoNoZone(collection.createdAt),
  };
}

export function presentToken(token: string) {
  return { access_token: token, token_type: "bearer" as const };
}

export function presentPipeline(pipeline: Pipeline) {
  return {
    id: pipeline.id,
    name: pipeline.name,
    description: pipeline.description,
    data_source_id: pipeline.dataSourceId,
    collection_id: pipeline.collectionId,
    status: pipeline.status,
    created_at: isoNoZone(pipeline.createdAt),
  };
}

/** null until discovery has counted something; 100.0 once complete (spec: ingestion job). */
export function progressPercentage(job: IngestJob): number | null {
  if (job.status === "completed") return 100.0;
  if (job.entitiesDiscovered === 0) return null;
  return Math.round((job.entitiesProcessed / job.entitiesDiscovered) * 1000) / 10;
}

export function presentJob(job: IngestJob) {
  return {
    job_id: job.id,
    pipeline_id: job.pipelineId,
    status: job.status,
    entities_discovered: job.entitiesDiscovered,
    entities_processed: job.entitiesProcessed,
    entities_failed: job.entitiesFailed,
    entities_skipped: job.entitiesSkipped,
    bytes_processed: job.bytesProcessed,
    current_entity: job.currentEntity,
    error_message: job.errorMessage,
    errors: job.errors,
    progress_percentage: progressPercentage(job),
    queued: job.runState === "queued",
    started_at: isoNoZone(job.startedAt),
    completed_at: isoNoZone(job.completedAt),
  };
}

export function presentSearchHit(hit: SearchHit) {
  return {
    document_id: hit.documentId,
    path: hit.path,
    title: hit.title,
    chunk_index: hit.chunkIndex,
    snippet: hit.snippet,
    score: hit.score,
  };
}

export function presentDocument(doc: DocumentSummary) {
  return {
    document_id: doc.documentId,
    data_source_id: doc.sourceId,
    path: doc.path,
    title: doc.title,
    size: doc.size,
    modified_at: isoNoZone(doc.modifiedAt),
    chunk_count: doc.chunkCount,
    indexed_at: isoNoZone(doc.indexedAt),
  };
}
