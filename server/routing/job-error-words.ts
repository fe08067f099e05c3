/**
 * The one place that turns a failed job's raw error (kept as `error_message`, the spec's field)
 * into a sentence a user can act on (`error_summary`). The raw text stays one click away in the UI.
 * Patterns match the messages Sluice itself writes (ingest/ingest-job.ts, the SMB and Drive connectors);
 * anything unknown keeps its own words.
 */
const WORDS: Array<[RegExp, string]> = [
  [/ECONNREFUSED/, "The file server refused the connection (nothing listens on that port there)."],
  [/ENOTFOUND|EAI_AGAIN|Cannot resolve/, "The file server's name could not be found on the network."],
  [/did not answer within|Timed out connecting|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH/, "The file server did not answer in time."],
  [/SMB login .* failed|Authentication failed|refused the stored/i, "The file server refused the stored user name or password."],
  [/ECONNRESET|connection (closed|lost)|SMB connection error/i, "The connection to the file server was lost during the run."],
  [/Interrupted by shutdown/, "The run stopped because Sluice was shut down; run it again to finish."],
  [/Interrupted by/i, "The run stopped because the process running it ended; run it again to finish."],
  [/disk .*full|ENOSPC|Not enough disk space/i, "The disk holding Sluice's data is full; free some space and run again."],
  [/index .*damaged|damaged index/i, "The collection's index is damaged; see the collection page to rebuild it."],
  [/database/i, "Sluice's database could not be reached during the run."],
  [/Source unreachable/, "The source could not be reached."],
];

export function jobErrorSummary(raw: string | null): string | null {
  if (raw === null) return null;
  if (raw.startsWith("Cancelled by ")) return raw;
  for (const [pattern, words] of WORDS) if (pattern.test(raw)) return words;
  return raw;
}
