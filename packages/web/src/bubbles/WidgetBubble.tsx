/**
 * A widget send: a question with options. Single choice answers on click; multi-select
 * collects ticks and answers on submit; `allowCustom` adds a free-text answer. The control is
 * disabled once answered (a later message answers this send: `questionAnswers`, or the answer
 * was just given here), and a ref guards against a second `answerWidget` while one is in flight.
 * A `dismissOnMoveOn` widget the user moved on from (a new prompt instead of an answer) shows
 * as dismissed, also disabled.
 */
import type { StoredWidget, WidgetOption } from '@sendbox/protocol';
import { useContext, useId, useRef, useState, type FormEvent } from 'react';
import { ApiError } from '../api/client.ts';
import { ConversationContext } from '../conversation-context.ts';
import { createSingleFlight } from '../single-flight.ts';

export function optionValue(option: WidgetOption): string {
  return option.value ?? option.label;
}

/** The answers a recorded answer text stands for (multi-select answers are joined with newlines). */
export function chosenValues(answer: string | null | undefined): ReadonlySet<string> {
  return new Set(answer ? answer.split('\n') : []);
}

export function WidgetBubble({
  sendId,
  message,
  answer,
  dismissed = false,
}: {
  sendId: string;
  message: StoredWidget;
  answer: string | undefined;
  dismissed?: boolean;
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
  const isDismissed = dismissed && answered === null;
  const disabled = answered !== null || isDismissed || busy || readOnly;
  const chosen = chosenValues(answered);
  // A recorded answer names the labels clicked (Grok Bot's content); one just given here, the values.
  const isChosen = (option: { label: string; value?: string }): boolean =>
    chosen.has(optionValue(option)) || chosen.has(option.label);

  async function send(value: string | string[]): Promise<void> {
    if (!context || answered !== null || isDismissed) return;
    setError(null);
    try {
      await flight.current.run(async () => {
        setBusy(true);
        try {
          await context.client.answerWidget({ agentId: context.agentId, messageId: sendId, answer: value });
          setSubmitted(Array.isArray(value) ? value.join('\n') : value);
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
      className={`widget${answered !== null ? ' answered' : ''}${isDismissed ? ' dismissed' : ''}`}
      role="group"
      aria-labelledby={promptId}
      data-testid="widget"
      data-answered={answered !== null}
      data-dismissed={isDismissed}
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
              <label key={value} className={`widget-check style-${option.style ?? 'default'}`}>
                <input
                  type="checkbox"
                  data-testid="widget-option"
                  data-value={value}
                  checked={answered !== null ? isChosen(option) : ticked.has(value)}
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
                className={`widget-option style-${option.style ?? 'default'}${isChosen(option) ? ' chosen' : ''}`}
                data-testid="widget-option"
                data-value={value}
                aria-pressed={isChosen(option)}
                disabled={disabled}
                onClick={() => void send(value)}
              >
                {option.label}
                {option.description && <small>{option.description}</small>}
              </button>
            );
          })}
        </div>
      )}
      {widget.allowCustom && answered === null && !isDismissed && (
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
          {answered === '' ? 'Answered.' : `Answered: ${answered.split('\n').join(', ')}`}
        </p>
      )}
      {isDismissed && (
        <p className="widget-status" role="status" data-testid="widget-dismissed">
          Dismissed: you moved on without answering.
        </p>
      )}
      {readOnly && answered === null && !isDismissed && (
        <p className="widget-status">This agent is read-only.</p>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
