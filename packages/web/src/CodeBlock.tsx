/**
 * A fenced code block: a header with its language and a "Copy" button, the code highlighted
 * once shiki has loaded. Highlighting is skipped for big code (a long line makes the grammar's
 * regexes crawl): such code stays plain text, which is fast to lay out.
 */
import { memo, useEffect, useRef, useState, type CSSProperties } from 'react';
import type { ThemedTokenWithVariants } from 'shiki/core';
import { highlight, languageFor } from './highlight.ts';

/** Above either limit the code is shown unhighlighted. */
export const HIGHLIGHT_MAX_CHARS = 20_000;
export const HIGHLIGHT_MAX_LINE = 1_000;

export function highlightable(code: string): boolean {
  if (code.length > HIGHLIGHT_MAX_CHARS) return false;
  let lineStart = 0;
  for (let i = code.indexOf('\n'); i !== -1; i = code.indexOf('\n', lineStart)) {
    if (i - lineStart > HIGHLIGHT_MAX_LINE) return false;
    lineStart = i + 1;
  }
  return code.length - lineStart <= HIGHLIGHT_MAX_LINE;
}

/** Writes `text` to the clipboard; falls back to a selection copy where the API is missing. */
export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  if (!ok) throw new Error('the browser refused to copy');
}

export function CopyButton({
  text,
  label,
  testId = 'copy-code',
  className = 'copy-button',
}: {
  text: string;
  label: string;
  testId?: string;
  className?: string;
}) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => clearTimeout(timer.current ?? undefined), []);
  return (
    <button
      type="button"
      className={className}
      aria-label={label}
      data-testid={testId}
      onClick={() => {
        copyText(text).then(
          () => setState('copied'),
          () => setState('failed'),
        );
        clearTimeout(timer.current ?? undefined);
        timer.current = setTimeout(() => setState('idle'), 2000);
      }}
    >
      <span aria-live="polite">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : 'Copy'}
      </span>
    </button>
  );
}

export const CodeBlock = memo(function CodeBlock({
  code,
  info,
}: {
  code: string;
  info?: string | undefined;
}) {
  const language = languageFor(info);
  const colour = language !== null && highlightable(code);
  const [tokens, setTokens] = useState<ThemedTokenWithVariants[][] | null>(null);
  useEffect(() => {
    if (!language || !colour) return;
    let live = true;
    highlight(code, language)
      .then((result) => {
        if (live) setTokens(result);
      })
      .catch((error: unknown) => console.warn(`code highlighting (${language}) failed: ${String(error)}`));
    return () => {
      live = false;
    };
  }, [code, language, colour]);
  const label = info?.trim() || 'text';
  return (
    <div className="code-block" data-language={language ?? info ?? 'text'} data-testid="code-block">
      <div className="code-head">
        <span className="code-language" data-testid="code-language">
          {label}
        </span>
        <CopyButton text={code} label={`Copy the ${label} code`} />
      </div>
      <pre>
        <code>
          {tokens
            ? tokens.map((line, i) => (
                <span className="code-line" key={i}>
                  {line.map((token, j) => (
                    <span
                      key={j}
                      style={
                        {
                          '--shiki-light': token.variants.light?.color,
                          '--shiki-dark': token.variants.dark?.color,
                        } as CSSProperties
                      }
                    >
                      {token.content}
                    </span>
                  ))}
                  {'\n'}
                </span>
              ))
            : code}
        </code>
      </pre>
    </div>
  );
});
