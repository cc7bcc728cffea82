/** A host notice (an error the user should see, a model switch...), compact. */
import type { NoticeEntry } from '@sendbox/protocol';

export function NoticeBubble({ entry }: { entry: NoticeEntry }) {
  return <div className="notice">{entry.text}</div>;
}
