/** One ranked chunk as a ranking statement answers it (sqlite-fts-ranking.ts), and as the readable page keeps it (sqlite-fts-readable.ts). */
export interface RankedRow {
  rowid: number;
  bm25: number;
  /** Only with a per-document cap or firstPerDocument. */
  document_id?: string;
}
