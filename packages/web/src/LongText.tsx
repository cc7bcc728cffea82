/**
 * Message text too big to parse as Markdown and lay out at once (a pasted log, a 1 MB line):
 * the first `LONG_TEXT_PREVIEW` characters as plain text, and the rest on request, in
 * `LONG_TEXT_PREVIEW`-sized steps so no single render blocks the page.
 */
import { useState } from 'react';
import { formatBytes } from './files.ts';
import { CopyButton } from './CodeBlock.tsx';

/** Text longer than this skips Markdown (micromark and layout grow with the length). */
export const LONG_TEXT = 50_000;
export const LONG_TEXT_PREVIEW = 20_000;

export function LongText({ text }: { text: string }) {
  const [shown, setShown] = useState(LONG_TEXT_PREVIEW);
  const rest = text.length - shown;
  return (
    <div className="long-text" data-testid="long-text">
      <p className="long-text-note">
        A long message ({formatBytes(new Blob([text]).size)}), shown as plain text.{' '}
        <CopyButton text={text} label="Copy the whole message" />
      </p>
      <div className="long-text-body">
        {text.slice(0, shown)}
        {rest > 0 && '…'}
      </div>
      {rest > 0 && (
        <button
          type="button"
          onClick={() => setShown((n) => n + LONG_TEXT_PREVIEW * 5)}
          data-testid="long-text-more"
        >
          Show more ({rest.toLocaleString()} characters left)
        </button>
      )}
    </div>
  );
}
