import type { ChunkInput, StagedDocument } from "./search-index";

/**
 * A StagedDocument over an engine's stateless staging calls: counts the chunks for the
 * document row and refuses use after commit or discard.
 */
export function stagedDocument(
  id: string,
  ops: {
    add(id: string, chunks: ChunkInput[]): Promise<void>;
    commit(id: string, chunkCount: number): Promise<void>;
    discard(id: string): Promise<void>;
  },
): StagedDocument {
  let chunkCount = 0;
  let ended = false;
  const open = () => {
    if (ended) throw new Error("The staged document was already committed or discarded");
  };
  return {
    async addChunks(chunks) {
      open();
      if (chunks.length === 0) return;
      await ops.add(id, chunks);
      chunkCount += chunks.length;
    },
    async commit() {
      open();
      await ops.commit(id, chunkCount);
      ended = true; // a failed commit can still be discarded
      return id;
    },
    async discard() {
      if (ended) return;
      ended = true;
      await ops.discard(id);
    },
  };
}
