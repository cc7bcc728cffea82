/**
 * The turn loop, one model step at a time. Between steps sit the rules of
 * the message mechanism: tool calls are dispatched by the host (the send gate
 * included), a widget or secret-request ends the turn, and a turn that ends
 * without any delivered send gets one more step and then a notice. The
 * reminders the model reads (after N tool calls without a send, after a
 * text-only step) are not written here: the driver's `step` adds them to
 * what it sends the model (context/injections.ts), from the history.
 */
import { hiddenPrompt } from '@sendbox/protocol';
import type { ModelMessage, ModelStepResult, ModelToolCall } from '../providers/types.ts';
import type { ToolModelOutput } from '../tools/types.ts';
import { TextOnlyGuard } from './text-only.ts';
import type { TurnStateMachine } from './turn-state.ts';

export interface ToolCallReport {
  /** What the model reads as this call's result. */
  output: ToolModelOutput;
  /** A send_message that reached the user. */
  delivered: boolean;
  /** The call's input as the model reads it back from the transcript, when that differs from what it sent. */
  modelInput?: Record<string, unknown>;
}

/** What the loop needs from the agent: the model, tool dispatch, and the transcript. */
export interface TurnDriver {
  /**
   * One model call for the history so far (the driver adds guidance and reminders to what the model
   * reads). Compaction may append its summary record to `history` (context/compaction.ts).
   */
  step(history: ModelMessage[]): Promise<ModelStepResult>;
  /** Records the step's private text / reasoning (JSONL assistant record, ledger `thinking`). */
  recordAssistant(step: ModelStepResult): void;
  /** Records the call, runs it, records the result. Never throws for a tool's own failure. */
  runToolCall(call: ModelToolCall): Promise<ToolCallReport>;
  /**
   * After Stop cut a step short: delivers what the user saw of each `send_message` being written
   * (the streamed text so far) as a send marked stopped, and returns each call as the model made it.
   */
  keepStoppedSends(): Promise<StoppedSend[]>;
  /** Writes a host sentence for the model as a hidden-prompt user record (never the user's words). */
  recordHiddenPrompt(text: string): void;
  /** A notice for the user; `reason` types it (failures are errors; a failed model call can be retried). */
  recordNotice(text: string, reason?: NoticeReason): void;
  recordTurnEnded(): void;
}

/** A send cut short by Stop, delivered with the text the user saw. */
export interface StoppedSend {
  call: ModelToolCall;
  /** The text the user saw. */
  text: string;
  /** The call's result, as the model reads it. */
  output: ToolModelOutput;
}

export type NoticeReason =
  'model-failed' | 'step-limit' | 'turn-budget' | 'stopped' | 'context-summarized' | 'context-truncated';

export interface TurnTexts {
  noReplyNotice: string;
  modelFailedNotice: (message: string) => string;
  stepLimitNotice: (steps: number) => string;
  /** The user pressed Stop (`cancelTurn`): the notice shown, and what the model reads next turn. */
  stoppedNotice: string;
  stoppedReminder: string;
  /** Added to the reminder for each message Stop cut short: what the user saw of it. */
  stoppedSendSeen: (text: string) => string;
  /** The result the model reads for a tool call the stop interrupted or never started. */
  interruptedResult: string;
}

/** Model steps shared by a turn and the children it starts (the profile's cap per turn). */
export interface StepBudget {
  readonly limit: number;
  /** Takes one step; false when none is left. */
  take(): boolean;
}

export function stepBudget(limit: number): StepBudget {
  let used = 0;
  return {
    limit,
    take() {
      if (used >= limit) return false;
      used += 1;
      return true;
    },
  };
}

export interface TurnOptions {
  maxSteps: number;
  /** Steps this turn shares with its children: when it runs out, the turn ends as at its own limit. */
  budget?: StepBudget;
  /**
   * A subagent's turn: a step without tool calls is its answer and ends the turn (no send_message
   * is owed, so no text-only reminder and no "no reply" notice).
   */
  endsOnText?: boolean;
  /** A silent routine's run: a turn may end without a send, with no reminder and no "no reply" notice. */
  quiet?: boolean;
  texts: TurnTexts;
  /** Aborted by `cancelTurn`: the model call is aborted, tools are killed, the turn ends. */
  signal?: AbortSignal;
  /** A cut turn going on (turn-resume.ts): the steps it took and the sends it delivered before the cut. */
  resumed?: { steps: number; delivered: number };
}

/**
 * Runs one turn. `history` already ends with the user message; it is
 * extended in place with everything the model saw and did.
 */
export async function runTurn(
  history: ModelMessage[],
  driver: TurnDriver,
  state: TurnStateMachine,
  options: TurnOptions,
): Promise<void> {
  const textOnly = new TextOnlyGuard();
  let delivered = options.resumed?.delivered ?? 0;
  let steps = options.resumed?.steps ?? 0;
  const stopped = (): boolean => options.signal?.aborted === true;
  const endStopped = (seen: readonly string[] = []): void => {
    driver.recordNotice(options.texts.stoppedNotice, 'stopped');
    tellModel(
      history,
      driver,
      [options.texts.stoppedReminder, ...seen.map(options.texts.stoppedSendSeen)].join(' '),
    );
  };
  try {
    for (;;) {
      if (stopped()) {
        endStopped();
        break;
      }
      if (steps >= options.maxSteps) {
        driver.recordNotice(options.texts.stepLimitNotice(options.maxSteps), 'step-limit');
        break;
      }
      if (options.budget && !options.budget.take()) {
        driver.recordNotice(options.texts.stepLimitNotice(options.budget.limit), 'turn-budget');
        break;
      }
      steps += 1;
      let step: ModelStepResult;
      try {
        step = await driver.step(history);
      } catch (error) {
        if (stopped()) {
          // What was streamed stays: the partial sends are delivered, and the model told what the user saw.
          const kept = await driver.keepStoppedSends();
          if (kept.length > 0) {
            history.push({
              role: 'assistant',
              content: kept.map(({ call }) => ({
                type: 'tool-call' as const,
                toolCallId: call.id,
                toolName: call.name,
                input: call.input,
              })),
            });
            history.push({
              role: 'tool',
              content: kept.map(({ call, output }) => ({
                type: 'tool-result' as const,
                toolCallId: call.id,
                toolName: call.name,
                output,
              })),
            });
          }
          endStopped(kept.map((send) => send.text));
          break;
        }
        driver.recordNotice(
          options.texts.modelFailedNotice(error instanceof Error ? error.message : String(error)),
          'model-failed',
        );
        break;
      }
      driver.recordAssistant(step);
      const assistantContent: Extract<ModelMessage, { role: 'assistant' }>['content'] = [];
      if (step.text) assistantContent.push({ type: 'text', text: step.text });
      const callParts = step.toolCalls.map((call) => ({
        type: 'tool-call' as const,
        toolCallId: call.id,
        toolName: call.name,
        input: call.parseError === undefined ? call.input : {},
      }));
      assistantContent.push(...callParts);
      if (assistantContent.length) history.push({ role: 'assistant', content: assistantContent });

      if (step.toolCalls.length === 0) {
        if (options.endsOnText || (options.quiet && delivered === 0)) break;
        const verdict = textOnly.onTurnEnd(delivered);
        // The next step reads the text-only reminder after this one (withInjections).
        if (verdict === 'remind') continue;
        if (verdict === 'notice') driver.recordNotice(options.texts.noReplyNotice);
        break;
      }

      const results: Extract<ModelMessage, { role: 'tool' }>['content'] = [];
      for (const [i, call] of step.toolCalls.entries()) {
        // Every call gets a result (the API requires one per call id); after a stop, "interrupted".
        const report = stopped() ? null : await driver.runToolCall(call);
        if (report?.delivered) delivered += 1;
        // The history holds the input as the transcript gives it back, so a restart reads the same.
        if (report?.modelInput) callParts[i]!.input = report.modelInput;
        results.push({
          type: 'tool-result',
          toolCallId: call.id,
          toolName: call.name,
          output:
            report && !stopped()
              ? report.output
              : { type: 'error-text', value: options.texts.interruptedResult },
        });
      }
      history.push({ role: 'tool', content: results });
      if (stopped()) {
        endStopped();
        break;
      }

      // A widget or secret-request ended the turn: wait for the user.
      if (state.sendsBlocked) break;
    }
    driver.recordTurnEnded();
  } finally {
    // A write that failed mid-turn ends it too; its caller closes it (notice, turn-ended) from the files.
    state.endTurn();
  }
}

/** The host tells the model something in the user role: a hidden prompt, never the user's words. */
function tellModel(history: ModelMessage[], driver: TurnDriver, text: string): void {
  const hidden = hiddenPrompt(text);
  history.push({ role: 'user', content: [{ type: 'text', text: hidden }] });
  driver.recordHiddenPrompt(hidden);
}
