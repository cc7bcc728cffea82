/** An entry from a newer host (or a malformed one): named, never dropped silently. */
import type { UnrecognizedEntry } from '../api/types.ts';

export function UnrecognizedBubble({ entry }: { entry: UnrecognizedEntry }) {
  return (
    <div className="notice unrecognized" title={entry.problem}>
      This page cannot show a “{entry.rawKind}” entry yet.
    </div>
  );
}
