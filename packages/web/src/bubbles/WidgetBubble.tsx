/**
 * A widget send: a question with options. Single choice answers on click; multi-select
 * collects ticks and answers on submit; `allowCustom` adds a free-text answer. The control is
 * disabled once answered (the ledger holds an answer, or it was just given here), and a ref
 * guards against a second `answerWidget` while one is in flight. The answer is shown as the
 * labels clicked and the chosen options are marked (a check, and `aria-pressed`/checked);
 * `primary` only styles an option. A widget the conversation moved past shows as skipped,
 * disabled.
 */
import type { StoredWidget, WidgetOption } from '@sendbox/protocol';
import { useContext, useId, useRef, useState, type FormEvent } from 'react';
import { ApiError } from '../api/client.ts';
import { ConversationContext } from '../conversation-context.ts';
import { createSingleFlight } from '../single-flight.ts';
import { answerLabels } from '../transcript.ts';
import { ErrorAlert } from '../ErrorAlert.tsx';

export function optionValue(option: WidgetOption): string {
  return option.value ?? option.label;
}

/** The labels a recorded answer stands for (multi-select answers are joined with newlines). */
export function chosenLabels(
  answer: string | null | undefined,
  options: readonly WidgetOption[],
): ReadonlySet<string> {
  return new Set(answer ? answerLabels(answer, options) : []);
}

export function WidgetBubble({
  sendId,
  message,
  answer,
  skipped = false,
}: {
  sendId: string;
  message: StoredWidget;
  answer: string | undefined;
  skipped?: boolean;
}) {
  const context = useContext(ConversationContext);
  const widget = message.widget;
  const [submitted, setSubmitted] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [ticked, setTicked] = useState<ReadonlySet<string>>(new Set());
  const flight = useRef(createSingleFlight());
  const ids = useId();

  const answered = answer ?? submitted;
  const readOnly = !context || context.readOnly;
  const isSkipped = skipped && answered === null;
  const disabled = answered !== null || isSkipped || busy || readOnly;
  const chosen = chosenLabels(answered, widget.options);

  async function send(value: string | string[]): Promise<void> {
    if (!context || answered !== null || isSkipped) return;
    setError(null);
    try {
      await flight.current.run(async () => {
        setBusy(true);
        try {
          await context.client.answerWidget({ agentId: context.agentId, messageId: sendId, answer: value });
          setSubmitted(Array.isArray(value) ? value.join('\n') : value);
          context.focusComposer();
        } catch (cause) {
          // Answered elsewhere (another tab): the ledger entry will show which answer.
          if (cause instanceof ApiError && cause.status === 409) setSubmitted('');
          else throw cause;
        } finally {
          setBusy(false);
        }
      });
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : String(cause));
    }
  }

  function submitTicked(event: FormEvent<HTMLFormElement>): void {
    event.preventDefault();
    if (ticked.size > 0) void send(widget.options.map(optionValue).filter((value) => ticked.has(value)));
  }

  function submitCustom(event: FormEvent<HTMLFormElement>): void {
    event.preventDefault();
    const input = event.currentTarget.elements.namedItem('custom');
    const text = input instanceof HTMLInputElement ? input.value.trim() : '';
    if (text === '') return;
    const extra = widget.multiSelect
      ? widget.options.map(optionValue).filter((value) => ticked.has(value))
      : [];
    void send(extra.length > 0 ? [...extra, text] : text);
  }

  const promptId = `${ids}-prompt`;
  return (
    <div
      className={`widget${answered !== null ? ' answered' : ''}${isSkipped ? ' skipped' : ''}`}
      role="group"
      aria-labelledby={promptId}
      data-testid="widget"
      data-answered={answered !== null}
      data-skipped={isSkipped}
    >
      <p className="widget-prompt" id={promptId}>
        {widget.prompt}
      </p>
      {widget.helpText && <p className="widget-help">{widget.helpText}</p>}
      {widget.multiSelect ? (
        <form className="widget-options multi" onSubmit={submitTicked}>
          {widget.options.map((option) => {
            const value = optionValue(option);
            return (
              <label
                key={value}
                className={`widget-check style-${option.style ?? 'default'}${chosen.has(option.label) ? ' chosen' : ''}`}
              >
                <input
                  type="checkbox"
                  data-testid="widget-option"
                  data-value={value}
                  checked={answered !== null ? chosen.has(option.label) : ticked.has(value)}
                  disabled={disabled}
                  onChange={(event) => {
                    const next = new Set(ticked);
                    if (event.target.checked) next.add(value);
                    else next.delete(value);
                    setTicked(next);
                  }}
                />
                <span>
                  {option.label}
                  {option.description && <small>{option.description}</small>}
                </span>
              </label>
            );
          })}
          <button type="submit" data-testid="widget-submit" disabled={disabled || ticked.size === 0}>
            Submit
          </button>
        </form>
      ) : (
        <div className="widget-options single">
          {widget.options.map((option) => {
            const value = optionValue(option);
            return (
              <button
                key={value}
                type="button"
                className={`widget-option style-${option.style ?? 'default'}${chosen.has(option.label) ? ' chosen' : ''}`}
                data-testid="widget-option"
                data-value={value}
                aria-pressed={chosen.has(option.label)}
                disabled={disabled}
                onClick={() => void send(value)}
              >
                <span className="widget-option-label">
                  {chosen.has(option.label) && (
                    <span className="check" aria-hidden="true">
                      ✓{' '}
                    </span>
                  )}
                  {option.label}
                </span>
                {option.description && <small>{option.description}</small>}
              </button>
            );
          })}
        </div>
      )}
      {widget.allowCustom && answered === null && !isSkipped && (
        <form className="widget-custom" onSubmit={submitCustom}>
          <input
            name="custom"
            type="text"
            placeholder="Or type your own answer"
            aria-label={`Your own answer to: ${widget.prompt}`}
            data-testid="widget-custom-input"
            disabled={disabled}
            autoComplete="off"
          />
          <button type="submit" data-testid="widget-custom-submit" disabled={disabled}>
            Send
          </button>
        </form>
      )}
      {answered !== null && (
        <p className="widget-status" role="status">
          {answered === '' ? 'Answered.' : `Answered: ${answerLabels(answered, widget.options).join(', ')}`}
        </p>
      )}
      {isSkipped && (
        <p className="widget-status" role="status" data-testid="widget-skipped">
          Skipped: the conversation moved on without an answer.
        </p>
      )}
      {readOnly && answered === null && !isSkipped && (
        <p className="widget-status">This agent is read-only.</p>
      )}
      <ErrorAlert message={error} />
    </div>
  );
}
