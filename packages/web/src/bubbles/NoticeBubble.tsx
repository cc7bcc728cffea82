/** A host notice (an error the user should see, a model switch...), compact. */
import type { NoticeEntry } from '@sendbox/protocol';

export function NoticeBubble({ entry }: { entry: NoticeEntry }) {
  // A failure (a model error, a turn cut short) reads as an error, not as a plain notice.
  return entry.level === 'error' ? (
    <div className="notice error" role="alert">
      {entry.text}
    </div>
  ) : (
    <div className="notice">{entry.text}</div>
  );
}
