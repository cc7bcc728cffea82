/**
 * An approval card (docs/mcp-client.md, "Approvals"): a tool call that waits for the user before
 * it runs. It shows the server, the tool and the arguments (scrubbed by the box), one line per
 * argument, and offers "Allow once", "Always allow this tool" and "Deny". The answer goes to
 * `answerToolApproval`, at most once from this card (a ref guards a double click; a 409 means it
 * was answered elsewhere and the ledger will say how). The card is a ledger entry, so it is still
 * there, and still answerable, after a reload or a restart of the box; once answered it says how.
 */
import { useContext, useId, useRef, useState } from 'react';
import { ApiError } from '../api/client.ts';
import { ConversationContext } from '../conversation-context.ts';
import { createSingleFlight } from '../single-flight.ts';
import type { ApprovalOutcome, ApprovalRequest } from '../transcript.ts';
import { ErrorAlert } from '../ErrorAlert.tsx';

type Decision = Exclude<ApprovalOutcome, 'stopped'>;

const CHOICES: ReadonlyArray<{ decision: Decision; label: string; className: string }> = [
  { decision: 'allow', label: 'Allow once', className: 'primary' },
  { decision: 'allow-always', label: 'Always allow this tool', className: '' },
  { decision: 'deny', label: 'Deny', className: 'danger' },
];

const OUTCOME_TEXT: Readonly<Record<ApprovalOutcome, string>> = {
  allow: 'Allowed once.',
  'allow-always': 'Allowed, and always allowed from now on for this agent.',
  deny: 'Denied: the agent was told you declined.',
  stopped: 'Not answered: the turn was stopped first.',
};

/** An argument's value as text: strings as they are, anything else as indented JSON. */
export function argumentText(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2) ?? String(value);
}

function Arguments({ args }: { args: unknown }) {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return <pre className="approval-args-raw">{argumentText(args)}</pre>;
  }
  const fields = Object.entries(args);
  if (fields.length === 0) return <p className="approval-none">No arguments.</p>;
  return (
    <dl className="approval-args" data-testid="approval-args">
      {fields.map(([name, value]) => (
        <div key={name} className="approval-arg">
          <dt>{name}</dt>
          <dd>
            <pre>{argumentText(value)}</pre>
          </dd>
        </div>
      ))}
    </dl>
  );
}

export function ApprovalBubble({
  entryId,
  request,
  outcome,
}: {
  entryId: string;
  request: ApprovalRequest;
  /** How the ledger says it was answered; undefined while it waits. */
  outcome: ApprovalOutcome | undefined;
}) {
  const context = useContext(ConversationContext);
  const [given, setGiven] = useState<Decision | 'elsewhere' | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const flight = useRef(createSingleFlight());
  const titleId = useId();
  const readOnly = !context || context.readOnly;
  const settled = outcome ?? (given === 'elsewhere' ? null : given);
  const open = outcome === undefined && given === null;

  async function answer(decision: Decision): Promise<void> {
    if (!context || !open) return;
    setError(null);
    try {
      await flight.current.run(async () => {
        setBusy(true);
        try {
          await context.client.answerToolApproval({ agentId: context.agentId, entryId, decision });
          setGiven(decision);
        } catch (cause) {
          // Answered in another tab, or stopped meanwhile: the ledger's answer entry will say how.
          if (cause instanceof ApiError && cause.status === 409) setGiven('elsewhere');
          else throw cause;
        } finally {
          setBusy(false);
        }
      });
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : String(cause));
    }
  }

  const tool = request.server ? `${request.server} · ${request.toolName}` : request.toolName;
  return (
    <div
      className={`approval${open ? '' : ' answered'}`}
      role="group"
      aria-labelledby={titleId}
      data-testid="approval-card"
      data-outcome={settled ?? (open ? 'waiting' : 'answered')}
    >
      <p className="approval-title" id={titleId}>
        {open ? 'Allow this tool call?' : 'Tool call'} <code>{tool}</code>
      </p>
      <dl className="approval-facts">
        {request.server && (
          <div>
            <dt>Server</dt>
            <dd data-testid="approval-server">{request.server}</dd>
          </div>
        )}
        <div>
          <dt>Tool</dt>
          <dd data-testid="approval-tool">{request.toolName}</dd>
        </div>
      </dl>
      <Arguments args={request.args} />
      {open && !readOnly && (
        <div className="approval-choices">
          {CHOICES.map((choice) => (
            <button
              key={choice.decision}
              type="button"
              className={choice.className}
              disabled={busy}
              data-testid={`approval-${choice.decision}`}
              onClick={() => void answer(choice.decision)}
            >
              {choice.label}
            </button>
          ))}
        </div>
      )}
      {open && readOnly && <p className="approval-status">This agent is read-only.</p>}
      {!open && (
        <p className="approval-status" role="status" data-testid="approval-status">
          {settled ? OUTCOME_TEXT[settled] : 'Answered.'}
        </p>
      )}
      <ErrorAlert message={error} />
    </div>
  );
}
