/** The events of POST /collections/{id}/ask, in their wire shape (imported by the UI as types: no imports here). */

/** A source as the `sources` event and a stored turn list it. */
export interface AskSource {
  n: number;
  document_id: string;
  title: string;
  path: string;
  snippet: string;
  score: number;
}

export type AskEvent =
  | { status: "sources"; sources: AskSource[] }
  | { status: "answering"; delta: string }
  | { status: "completed"; answer: string; citations: number[]; conversation_id: string; model: string; eval_count: number; tokens_per_second: number }
  | { status: "error"; detail: string };
