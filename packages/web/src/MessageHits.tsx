/**
 * Content search in the sidebar: what the filter box holds, searched in every agent's messages
 * through the box's index (`searchMessages`), as the user types; each hit names its agent, what
 * matched (the user's words, the agent's message, a tool, its thinking) and a snippet with the
 * matched words marked. Only the newest query's answer is shown. Marks for the bench
 * (bench/ui-search.ts): `sendbox:search-input` as a query is typed, `sendbox:search` measured from
 * it once its hits are painted.
 */
import { useEffect, useRef, useState, type ReactNode } from 'react';
import type { MessageHit, RosterRow } from './api/types.ts';
import { agentTitle } from './agent-title.ts';

/** Content search starts at this many characters (shorter ones filter agent names only). */
export const MIN_SEARCH_CHARS = 3;

const KIND_LABELS: Record<string, string> = {
  user: 'you',
  assistant: 'agent',
  thinking: 'thinking',
  tool_input: 'tool',
  tool_output: 'tool output',
  title: 'title',
};

type SearchState =
  | { status: 'idle' }
  | { status: 'searching'; query: string }
  | { status: 'done'; query: string; hits: readonly MessageHit[] }
  | { status: 'failed'; query: string; error: string };

/** The hits of `query` (trimmed), newest query wins; idle below MIN_SEARCH_CHARS. */
export function useMessageSearch(
  query: string,
  search: ((query: string) => Promise<MessageHit[]>) | undefined,
): SearchState {
  const [state, setState] = useState<SearchState>({ status: 'idle' });
  const latest = useRef(0);
  const trimmed = query.trim();
  useEffect(() => {
    const ticket = ++latest.current;
    if (!search || trimmed.length < MIN_SEARCH_CHARS) {
      setState({ status: 'idle' });
      return;
    }
    setState((current) => (current.status === 'done' ? current : { status: 'searching', query: trimmed }));
    search(trimmed).then(
      (hits) => {
        if (ticket === latest.current) setState({ status: 'done', query: trimmed, hits });
      },
      (cause: unknown) => {
        if (ticket === latest.current)
          setState({
            status: 'failed',
            query: trimmed,
            error: cause instanceof Error ? cause.message : String(cause),
          });
      },
    );
  }, [trimmed, search]);
  return state;
}

function Snippet({ snippet }: { snippet: MessageHit['snippet'] }) {
  const parts: ReactNode[] = [];
  let at = 0;
  snippet.highlights.forEach(([start, end], i) => {
    if (start > at) parts.push(snippet.text.slice(at, start));
    parts.push(<mark key={i}>{snippet.text.slice(start, end)}</mark>);
    at = end;
  });
  if (at < snippet.text.length) parts.push(snippet.text.slice(at));
  return <span className="hit-snippet">{parts}</span>;
}

export function MessageHits({
  state,
  agents,
  onOpen,
}: {
  state: SearchState;
  agents: readonly RosterRow[];
  onOpen: (hit: MessageHit) => void;
}) {
  const painted = state.status === 'done' ? state : null;
  useEffect(() => {
    if (!painted) return;
    // After the frame that shows them: the bench's "keypress to painted results".
    const frame = requestAnimationFrame(() => {
      try {
        performance.measure('sendbox:search', {
          start: 'sendbox:search-input',
          detail: { query: painted.query, hits: painted.hits.length },
        });
      } catch {
        // No input mark (a refresh of the same query): nothing to measure.
      }
    });
    return () => cancelAnimationFrame(frame);
  }, [painted]);
  if (state.status === 'idle') return null;
  const names = new Map(agents.map((agent) => [agent.id, agentTitle(agent)]));
  return (
    <section className="message-hits" aria-label="Messages" data-testid="message-hits">
      <h2 className="message-hits-head">Messages</h2>
      {state.status === 'searching' && <p className="empty">Searching…</p>}
      {state.status === 'failed' && (
        <p className="error" role="alert">
          {state.error}
        </p>
      )}
      {state.status === 'done' && state.hits.length === 0 && (
        <p className="empty" data-testid="message-hits-empty">
          No message holds “{state.query}”.
        </p>
      )}
      {state.status === 'done' && state.hits.length > 0 && (
        <ul>
          {state.hits.map((hit) => (
            <li key={`${hit.agentId}#${hit.message}`}>
              <button
                type="button"
                className="message-hit"
                data-testid="message-hit"
                data-agent-id={hit.agentId}
                onClick={() => onOpen(hit)}
              >
                <span className="hit-head">
                  <span className="hit-agent">{names.get(hit.agentId) ?? hit.title ?? hit.agentId}</span>
                  <span className="hit-kind">{KIND_LABELS[hit.kind] ?? hit.kind}</span>
                </span>
                <Snippet snippet={hit.snippet} />
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
