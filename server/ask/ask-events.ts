/** The events of POST /collections/{id}/ask, in their wire shape (imported by the UI as types: no imports here). */

/** A source as the `sources` event and a stored turn list it. */
export interface AskSource {
  n: number;
  document_id: string;
  title: string;
  path: string;
  snippet: string;
  score: number;
  /** 1-based page (or slide) the passage starts on; null in an unpaged document (and in turns recorded before pages were kept: absent). */
  page?: number | null;
  /** "page 7", "slide 3", "sheet Budget"; null where the document has no parts. */
  location_label?: string | null;
  /** The passage was read by OCR from a scan. */
  from_scan?: boolean;
}

export type AskEvent =
  | { status: "sources"; sources: AskSource[] }
  | { status: "answering"; delta: string }
  | { status: "completed"; answer: string; citations: number[]; conversation_id: string; model: string; eval_count: number; tokens_per_second: number }
  | { status: "error"; detail: string };
