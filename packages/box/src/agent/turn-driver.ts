/**
 * The turn driver: what one turn of an agent does between model steps. It
 * dispatches each tool call (send_message through the send gate, the other
 * tools after their input check) and writes every record of the turn through
 * the agent's transcript writer. `runTurn` (turn.ts) calls it step by step.
 */
import { assistantId, sendId, sendSuccessText, type SendMessageFeature } from '@sendbox/protocol';
import { z } from 'zod';
import type { ModelProvider, ModelStepResult, ModelToolCall, ModelToolSpec } from '../providers/types.ts';
import type { AttachmentsStore } from '../stores/attachments.ts';
import type { JsonObject } from '@sendbox/txcript';
import { handleSendMessage } from '../tools/send-message/index.ts';
import type { HostTool } from '../tools/types.ts';
import { injectionsLayer } from '../context/injections.ts';
import { modelCallView, type ContextLayer } from '../context/model-call.ts';
import type { Compaction } from '../context/compaction.ts';
import { sendInputAsRead } from '../context/send-input.ts';
import { systemPrompt } from '../context/system-prompt.ts';
import type { TranscriptBlock } from '../stores/transcript.ts';
import type { TranscriptWriter } from '../stores/transcript-writer.ts';
import type { AgentPaths } from '../stores/files/layout.ts';
import type { Profile } from '../stores/files/profile.ts';
import type { QuestionBook } from './question-book.ts';
import { callInput, dispatchToolCall, type DispatchContext } from './tool-dispatch.ts';
import type { ToolCallReport, TurnDriver } from './turn.ts';
import type { TurnStateMachine } from './turn-state.ts';

/** What a turn needs from its agent. */
export interface TurnContext extends DispatchContext {
  readonly paths: AgentPaths;
  readonly profile: Profile;
  readonly feature: SendMessageFeature;
  readonly tools: readonly HostTool[];
  readonly writer: TranscriptWriter;
  readonly attachments: AttachmentsStore;
  readonly state: TurnStateMachine;
  readonly questions: QuestionBook;
  /** Non-send tool calls in a row before the reminder the model reads (withInjections). */
  readonly sendReminderEvery: number;
  /** What capabilities add to each model call's view, after the guidance and reminders (context/model-call.ts). */
  readonly contextLayers: readonly ContextLayer[];
  /** What keeps each call inside the model's window (context/compaction.ts); absent: the whole history. */
  readonly compaction?: Compaction | undefined;
}

/** Hooks of the web UI: Stop (`signal`) and streaming bubbles (`onDraft`, scrubbed; null when a send is over). */
export interface TurnHooks {
  signal: AbortSignal;
  onDraft(toolCallId: string, text: string | null): void;
}

export function turnDriver(
  ctx: TurnContext,
  turn: number,
  provider: ModelProvider,
  hooks: TurnHooks,
): TurnDriver {
  const counters = { assistant: 0, send: 0, tool: 0, notice: 0 };
  const deliveredInTurn = new Map<string, string>();
  const tools = new Map(ctx.tools.map((tool) => [tool.name, tool]));
  const specs = toolSpecs(ctx);
  const system = systemPrompt({ ...ctx.profile, sandbox: ctx.paths.sandbox });
  // The per-call view: guidance and reminders first, then what capabilities add (memory, compaction).
  const layers: ContextLayer[] = [
    injectionsLayer({ guidance: ctx.feature.guidance, sendReminderEvery: ctx.sendReminderEvery }),
    ...ctx.contextLayers,
  ];
  const now = () => ctx.now();
  const { writer } = ctx;
  const recordCall = (name: string, input: JsonObject): void => {
    writer.appendRecords([{ role: 'assistant', blocks: [{ type: 'tool_use', name, input }] }]);
  };
  const recordResult = (name: string, result: JsonObject): void => {
    writer.appendRecords([{ role: 'tool', blocks: [{ type: 'tool_result', name, result }] }]);
  };
  const runCall = async (call: ModelToolCall): Promise<ToolCallReport> => {
    const tool = tools.get(call.name);
    const known = tool !== undefined || call.name === 'send_message';
    if (call.parseError !== undefined && known) {
      const message =
        `Your ${call.name} call was not run: its arguments are not valid JSON (${call.parseError}). ` +
        `Call ${call.name} again with a JSON object as arguments.`;
      const { toolCallId: _id, ...modelInput } = callInput(call);
      recordCall(call.name, callInput(call));
      recordResult(call.name, { error: { error: message } });
      return { output: { type: 'error-text', value: message }, delivered: false, modelInput };
    }
    if (call.name === 'send_message') {
      const outcome = await handleSendMessage(call.input, {
        sandboxDir: ctx.paths.sandbox,
        attachments: ctx.attachments,
        secrets: ctx.scrubber(),
        sendsBlocked: () => ctx.state.sendsBlocked,
        nextSendId: () => sendId(turn, counters.send++),
        deliveredInTurn,
        now,
      });
      recordCall('send_message', { ...outcome.jsonlInput, toolCallId: call.id });
      const modelInput = sendInputAsRead(outcome.jsonlInput, outcome.delivered ? outcome.stored : undefined);
      if (!outcome.delivered) {
        recordResult('send_message', outcome.result);
        return { output: { type: 'error-text', value: outcome.reason }, delivered: false, modelInput };
      }
      // Delivered means committed in the ledger: only then do the model and the JSONL learn of it.
      const [entry] = writer.appendEntries([
        { id: outcome.messageId, kind: 'send-message', message: outcome.stored, timestampMs: now() },
      ]);
      recordResult('send_message', outcome.result);
      if (entry) ctx.questions.noteSend(outcome.messageId, entry.seq, outcome.stored);
      if (outcome.awaitsUser) ctx.state.awaitUser();
      return {
        output: { type: 'text', value: sendSuccessText(outcome.messageId) },
        delivered: true,
        modelInput,
      };
    }
    return dispatchToolCall(call, tool, {
      ctx,
      turn,
      knownNames: () => ['send_message', ...tools.keys()],
      recordCall,
      recordResult,
      recordEntry: (entry) => {
        writer.appendEntries([{ id: `t${turn}c${counters.tool++}`, ...entry }]);
      },
      signal: hooks.signal,
    });
  };

  const driver: TurnDriver = {
    // Guidance and reminders are what the model reads, never what the transcript holds.
    step: async (history) => {
      const compaction = ctx.compaction;
      const view = compaction
        ? await compaction.view(history, { system, tools: specs, turn, signal: hooks.signal }, layers, {
            recordHiddenPrompt: (text) => driver.recordHiddenPrompt(text),
            recordNotice: (text, reason) => driver.recordNotice(text, reason),
          })
        : await modelCallView(system, history, layers);
      const result = await provider.step({
        ...view,
        tools: specs,
        abortSignal: hooks.signal,
        onSendDraft: ({ toolCallId, text }) => hooks.onDraft(toolCallId, ctx.scrubber().draft(text)),
      });
      if (result.inputTokens !== undefined) compaction?.observe(view, result.inputTokens);
      return result;
    },
    recordAssistant: (step: ModelStepResult) => {
      const blocks: TranscriptBlock[] = [];
      if (step.reasoning) blocks.push({ type: 'thinking', thinking: step.reasoning });
      if (step.text) blocks.push({ type: 'text', text: step.text });
      if (blocks.length === 0) return;
      writer.appendRecords([{ role: 'assistant', blocks }]);
      if (step.text) {
        writer.appendEntries([
          {
            id: assistantId(turn, counters.assistant++),
            kind: 'thinking',
            text: step.text,
            timestampMs: now(),
          },
        ]);
      }
    },
    runToolCall: async (call: ModelToolCall): Promise<ToolCallReport> => {
      try {
        return await runCall(call);
      } finally {
        // The draft of this send is over: its entry (if delivered) was emitted before this.
        if (call.name === 'send_message') hooks.onDraft(call.id, null);
      }
    },
    recordHiddenPrompt: (text) => {
      writer.appendRecords([{ role: 'user', blocks: [{ type: 'text', text }] }]);
    },
    recordNotice: (text, reason) => {
      writer.appendEntries([
        {
          id: `t${turn}n${counters.notice++}`,
          kind: 'notice',
          text,
          // `level` types a failure as an error (the UI shows it as one, with Retry); `reason` says which.
          ...(reason === 'model-failed' || reason === 'step-limit' ? { level: 'error' as const } : {}),
          ...(reason ? { reason } : {}),
          timestampMs: now(),
        },
      ]);
    },
    recordTurnEnded: () => {
      writer.appendEntries([{ id: `t${turn}e`, kind: 'turn-ended', timestampMs: now() }]);
    },
  };
  return driver;
}

function toolSpecs(ctx: TurnContext): ModelToolSpec[] {
  const specs: ModelToolSpec[] = ctx.feature.tools.map((tool) => {
    const { $schema: _drop, ...schema } = tool.jsonSchema;
    return { name: tool.name, description: tool.description, inputSchema: schema };
  });
  for (const tool of ctx.tools) {
    const { $schema: _drop, ...schema } = z.toJSONSchema(tool.input, {
      target: 'draft-7',
      io: 'input',
    }) as Record<string, unknown>;
    specs.push({ name: tool.name, description: tool.description, inputSchema: schema });
  }
  return specs;
}
