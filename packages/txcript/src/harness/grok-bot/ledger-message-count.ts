/**
 * How many Common messages a ledger's rows become, counted by SQLite without decoding an entry in
 * JavaScript, so a listing's count is the number `view` shows (ledger-to-common.ts) at the cost of
 * a row count. The rule mirrors `ledgerToCommon` kind by kind; ledger-message-count.test.ts holds
 * the two to the same answer for every kind and edge.
 */

/** The Common messages one `transcript_entries.entry` JSON text gives (an SQL expression over `entry`). */
const MESSAGES_OF_ENTRY = `
  CASE
    WHEN COALESCE(json_extract(entry, '$.branched'), 0) = 1 THEN 0
    ELSE CASE json_extract(entry, '$.kind')
      WHEN 'message' THEN COALESCE(json_extract(entry, '$.content'), '') != ''
      WHEN 'user-message' THEN ${anyText()}
      WHEN 'receive-message' THEN ${anyText()}
      WHEN 'user' THEN ${anyText()}
      WHEN 'assistant' THEN ${anyText()}
      WHEN 'send-message' THEN 2
      WHEN 'user-attachment' THEN 1
      WHEN 'tool-call' THEN CASE json_extract(entry, '$.status') WHEN 'running' THEN 1 ELSE 2 END
      WHEN 'thinking' THEN COALESCE(json_extract(entry, '$.text'), '') != ''
      ELSE 0
    END
  END`;

/** A C12 entry's text is its content, text or prompt, the first that is there. */
function anyText(): string {
  return `COALESCE(json_extract(entry, '$.content'), json_extract(entry, '$.text'), json_extract(entry, '$.prompt'), '') != ''`;
}

/** One value: the Common messages of every row of `transcript_entries`. */
export const COMMON_MESSAGES_SQL = `SELECT COALESCE(SUM(${MESSAGES_OF_ENTRY}), 0) FROM transcript_entries`;
