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
import { liveTool } from './live-tool.ts';
import type { StoppedSend, ToolCallReport, TurnDriver } from './turn.ts';
import type { TurnStateMachine } from './turn-state.ts';
import type { ResumePoint } from './turn-resume.ts';
import type { HostEvent } from './events.ts';

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

/**
 * Hooks of the web UI: Stop (`signal`), and `emit` for what the page shows live: streaming bubbles
 * (`draft`, scrubbed; null when a send is over), the rows of running tools (`tool`) and the model's
 * retries (`retry`). Absent (a subagent's turn): nothing is shown live.
 */
export interface TurnHooks {
  signal: AbortSignal;
  emit?(event: HostEvent): void;
}

export function turnDriver(
  ctx: TurnContext,
  turn: number,
  provider: ModelProvider,
  hooks: TurnHooks,
  /** A cut turn going on (turn-resume.ts): its ids continue after the ledger's, its sends stay delivered. */
  resumed?: ResumePoint,
): TurnDriver {
  const counters = resumed ? { ...resumed.counters } : { assistant: 0, send: 0, tool: 0, notice: 0 };
  const deliveredInTurn = new Map<string, string>(resumed?.delivered);
  /** The text of each send the current step is writing, as the user sees it (scrubbed). */
  const drafts = new Map<string, string>();
  const tools = new Map(ctx.tools.map((tool) => [tool.name, tool]));
  const specs = toolSpecs(ctx);
  // The per-call view: guidance and reminders first, then what capabilities add (memory, compaction).
  const layers: ContextLayer[] = [
    injectionsLayer({ guidance: ctx.feature.guidance, sendReminderEvery: ctx.sendReminderEvery }),
    ...ctx.contextLayers,
  ];
  const now = () => ctx.now();
  const onDraft = (toolCallId: string, text: string | null): void =>
    hooks.emit?.({ type: 'draft', agentId: ctx.id, toolCallId, text });
  const { writer } = ctx;
  const recordCall = (name: string, input: JsonObject): void => {
    writer.appendRecords([{ role: 'assistant', blocks: [{ type: 'tool_use', name, input }] }]);
  };
  const recordResult = (name: string, result: JsonObject): void => {
    writer.appendRecords([{ role: 'tool', blocks: [{ type: 'tool_result', name, result }] }]);
  };
  const runSend = async (toolCallId: string, input: unknown, stopped: boolean): Promise<ToolCallReport> => {
    const outcome = await handleSendMessage(input, {
      sandboxDir: ctx.paths.sandbox,
      attachments: ctx.attachments,
      secrets: ctx.scrubber(),
      sendsBlocked: () => ctx.state.sendsBlocked,
      nextSendId: () => sendId(turn, counters.send++),
      deliveredInTurn,
      now,
    });
    recordCall('send_message', { ...outcome.jsonlInput, toolCallId });
    const modelInput = sendInputAsRead(outcome.jsonlInput, outcome.delivered ? outcome.stored : undefined);
    if (!outcome.delivered) {
      recordResult('send_message', outcome.result);
      return { output: { type: 'error-text', value: outcome.reason }, delivered: false, modelInput };
    }
    // Delivered means committed in the ledger: only then do the model and the JSONL learn of it.
    const [entry] = writer.appendEntries([
      {
        id: outcome.messageId,
        kind: 'send-message',
        message: outcome.stored,
        ...(stopped ? { stopped: true } : {}),
        timestampMs: now(),
      },
    ]);
    recordResult('send_message', outcome.result);
    if (entry) ctx.questions.noteSend(outcome.messageId, entry.seq, outcome.stored);
    if (outcome.awaitsUser) ctx.state.awaitUser();
    return {
      output: { type: 'text', value: sendSuccessText(outcome.messageId) },
      delivered: true,
      modelInput,
    };
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
    if (call.name === 'send_message') return runSend(call.id, call.input, false);
    return dispatchToolCall(call, tool, {
      ctx,
      turn,
      knownNames: () => ['send_message', ...tools.keys()],
      recordCall,
      recordResult,
      recordEntry: (entry) => {
        writer.appendEntries([{ id: `t${turn}c${counters.tool++}`, ...entry }]);
      },
      appendEntry: (entry) => {
        writer.appendEntries([entry]);
      },
      turnState: ctx.state,
      signal: hooks.signal,
      ...(hooks.emit
        ? { live: (call) => liveTool({ agentId: ctx.id, ...call }, ctx.scrubber(), (e) => hooks.emit?.(e)) }
        : {}),
    });
  };

  const driver: TurnDriver = {
    // Guidance and reminders are what the model reads, never what the transcript holds.
    step: async (history) => {
      // Read per call: the profile (name, instructions, model) may change mid-turn (update_state profile).
      const system = systemPrompt({ ...ctx.profile, sandbox: ctx.paths.sandbox });
      const compaction = ctx.compaction;
      const view = compaction
        ? await compaction.view(history, { system, tools: specs, turn, signal: hooks.signal }, layers, {
            recordHiddenPrompt: (text) => driver.recordHiddenPrompt(text),
            recordNotice: (text, reason) => driver.recordNotice(text, reason),
          })
        : await modelCallView(system, history, layers);
      drafts.clear();
      const result = await modelOf(provider, ctx.profile).step({
        ...view,
        tools: specs,
        abortSignal: hooks.signal,
        onRetry: (retry) => hooks.emit?.({ type: 'retry', agentId: ctx.id, retry }),
        onSendDraft: ({ toolCallId, text }) => {
          const shown = ctx.scrubber().draft(text);
          drafts.set(toolCallId, shown);
          onDraft(toolCallId, shown);
        },
      });
      if (result.inputTokens !== undefined) compaction?.observe(view, result.inputTokens);
      return result;
    },
    keepStoppedSends: async () => {
      const kept: StoppedSend[] = [];
      const cut = [...drafts];
      drafts.clear();
      for (const [toolCallId, text] of cut) {
        try {
          if (text.trim() === '') continue;
          const call: ModelToolCall = {
            id: toolCallId,
            name: 'send_message',
            input: { type: 'text', content: text },
          };
          // Written as the send it was, with the text the user saw; the entry says it was stopped.
          const report = await runSend(toolCallId, call.input, true);
          if (report.delivered) kept.push({ call, text, output: report.output });
        } finally {
          onDraft(toolCallId, null);
        }
      }
      return kept;
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
        if (call.name === 'send_message') onDraft(call.id, null);
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

/** The agent's own model (`updateAgent {model}`) while the provider it was picked for is the one configured. */
function modelOf(provider: ModelProvider, profile: Profile): ModelProvider {
  if (!profile.model || profile.modelProvider !== provider.provider || !provider.withModel) return provider;
  return provider.withModel(profile.model);
}

function toolSpecs(ctx: TurnContext): ModelToolSpec[] {
  const specs: ModelToolSpec[] = ctx.feature.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: withoutDialect(tool.jsonSchema),
  }));
  for (const tool of ctx.tools)
    specs.push({ name: tool.name, description: tool.description, inputSchema: inputSchemaOf(tool.input) });
  return specs;
}

/**
 * Each tool's JSON Schema, converted once per zod schema: the conversion costs about 13 ms for the
 * whole tool set, and every turn of every agent asked for it (a burst of prompts to many agents
 * spent most of its time here). The same object each time also keeps the token counter's cache warm.
 */
const inputSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();
const strippedSchemas = new WeakMap<Record<string, unknown>, Record<string, unknown>>();

/** A tool's JSON Schema without `$schema`, the same object for the same schema (see above). */
function withoutDialect(jsonSchema: Record<string, unknown>): Record<string, unknown> {
  let schema = strippedSchemas.get(jsonSchema);
  if (!schema) {
    const { $schema: _drop, ...rest } = jsonSchema;
    schema = rest;
    strippedSchemas.set(jsonSchema, schema);
  }
  return schema;
}

function inputSchemaOf(input: z.ZodType): Record<string, unknown> {
  let schema = inputSchemas.get(input);
  if (!schema) {
    const { $schema: _drop, ...converted } = z.toJSONSchema(input, {
      target: 'draft-7',
      io: 'input',
    }) as Record<string, unknown>;
    schema = converted;
    inputSchemas.set(input, schema);
  }
  return schema;
}
