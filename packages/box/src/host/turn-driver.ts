/**
 * The turn driver: what one turn of an agent does between model steps. It
 * dispatches each tool call (send_message through the send gate, the other
 * tools after their input check) and writes every record of the turn through
 * the agent's transcript writer. `runTurn` (turn.ts) calls it step by step.
 */
import { assistantId, sendId, sendSuccessText, type SendMessageFeature } from '@sendbox/protocol';
import { z } from 'zod';
import type { AttachmentStore } from '../attachments/store.ts';
import type { ModelProvider, ModelStepResult, ModelToolCall, ModelToolSpec } from '../providers/types.ts';
import type { Scrubber } from '../secrets/scrub.ts';
import type { SecretStore } from '../secrets/store.ts';
import { handleSendMessage, type JsonObject } from '../tools/send-message.ts';
import {
  describeZodError,
  errorOutcome,
  statusOf,
  type DiskRoom,
  type HostTool,
  type TodoItem,
  type ToolOutcome,
} from '../tools/types.ts';
import { modelOutputFor } from '../transcript/model-view.ts';
import { withInjections } from './middleware/injections.ts';
import type { TranscriptBlock, TranscriptWriter } from '../transcript/writer.ts';
import type { AgentPaths } from './layout.ts';
import type { Profile } from './profile.ts';
import type { QuestionBook } from './question-book.ts';
import { toolCallDetails } from './tool-details.ts';
import type { ToolCallReport, TurnDriver } from './turn.ts';
import type { TurnStateMachine } from './turn-state.ts';

/** What a turn needs from its agent. */
export interface TurnContext {
  readonly paths: AgentPaths;
  readonly profile: Profile;
  readonly feature: SendMessageFeature;
  readonly tools: readonly HostTool[];
  readonly toolEnv: Readonly<Record<string, string>>;
  readonly todos: TodoItem[];
  readonly writer: TranscriptWriter;
  readonly attachments: AttachmentStore;
  readonly secrets: SecretStore;
  readonly state: TurnStateMachine;
  readonly questions: QuestionBook;
  /** Non-send tool calls in a row before the reminder the model reads (withInjections). */
  readonly sendReminderEvery: number;
  scrubber(): Scrubber;
  /** Hosts the agent's commands may reach (the profile's sandbox.allowDomains, as it is now). */
  allowDomains(): Promise<readonly string[]>;
  /** The sandbox's disk quota, when the host keeps one. */
  readonly disk?: DiskRoom;
  now(): number;
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
  const system = systemPrompt(ctx);
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
      recordCall(call.name, callInput(call));
      recordResult(call.name, { error: { error: message } });
      return { output: { type: 'error-text', value: message }, delivered: false };
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
      if (!outcome.delivered) {
        recordResult('send_message', outcome.result);
        return { output: { type: 'error-text', value: outcome.reason }, delivered: false };
      }
      // Delivered means committed in the ledger: only then do the model and the JSONL learn of it.
      const [entry] = writer.appendEntries([
        { id: outcome.messageId, kind: 'send-message', message: outcome.stored, timestampMs: now() },
      ]);
      recordResult('send_message', outcome.result);
      if (entry) ctx.questions.noteSend(outcome.messageId, entry.seq, outcome.stored);
      if (outcome.awaitsUser) ctx.state.awaitUser();
      return { output: { type: 'text', value: sendSuccessText(outcome.messageId) }, delivered: true };
    }
    const parsed = tool?.input.safeParse(call.input);
    // One time for the recorded input and the run (update_todos stamps its input with it).
    const startedAt = now();
    recordCall(
      call.name,
      tool?.recordedInput && parsed?.success
        ? {
            ...tool.recordedInput(parsed.data, { todos: ctx.todos, now: () => startedAt }),
            toolCallId: call.id,
          }
        : callInput(call),
    );
    let outcome: ToolOutcome;
    if (!tool || !parsed) {
      const names = ['send_message', ...tools.keys()].join(', ');
      outcome = errorOutcome(
        `There is no tool named ${call.name}. Your tools are: ${names}.`,
        `unknown tool ${call.name}`,
      );
    } else {
      outcome = parsed.success
        ? await runTool(ctx, tool, parsed.data, startedAt, hooks.signal)
        : errorOutcome(describeZodError(tool.name, parsed.error), 'invalid input');
    }
    const scrubber = ctx.scrubber();
    const envelope = scrubber.value(outcome.envelope);
    recordResult(call.name, envelope);
    const rawInput = isObject(call.input) ? (call.input as JsonObject) : {};
    writer.appendEntries([
      {
        id: `t${turn}c${counters.tool++}`,
        kind: 'tool-call',
        name: call.name,
        status: statusOf(envelope),
        summary: scrubber.text(outcome.summary),
        // Hook (web tool rows): description, scrubbed input/output and duration.
        ...toolCallDetails(rawInput, envelope, now() - startedAt, scrubber),
        timestampMs: now(),
      },
    ]);
    return { output: modelOutputFor(call.name, envelope), delivered: false };
  };

  return {
    // Guidance and reminders are what the model reads, never what the transcript holds.
    step: (messages) =>
      provider.step({
        system,
        messages: withInjections(messages, {
          guidance: ctx.feature.guidance,
          sendReminderEvery: ctx.sendReminderEvery,
        }),
        tools: specs,
        abortSignal: hooks.signal,
        onSendDraft: ({ toolCallId, text }) => hooks.onDraft(toolCallId, ctx.scrubber().text(text)),
      }),
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

function systemPrompt(ctx: TurnContext): string {
  const { profile } = ctx;
  return [
    `You are ${profile.name}, an agent running in sendbox.${profile.description ? ` ${profile.description}` : ''}`,
    `Your sandbox folder is ${ctx.paths.sandbox}. Your tools run there; files you make for the user go there,`,
    'and you send them with send_message type attachment and a file:/// URL of the absolute path.',
  ].join('\n');
}

async function runTool(
  ctx: TurnContext,
  tool: HostTool,
  input: unknown,
  startedAt: number,
  signal: AbortSignal,
): Promise<ToolOutcome> {
  const secrets = await ctx.secrets.all();
  try {
    return await tool.run(input, {
      sandboxDir: ctx.paths.sandbox,
      ...(ctx.disk ? { disk: ctx.disk } : {}),
      env: { ...ctx.toolEnv, HOME: ctx.paths.sandbox, ...Object.fromEntries(secrets) },
      allowDomains: await ctx.allowDomains(),
      scrub: ctx.scrubber(),
      todos: ctx.todos,
      signal,
      now: () => startedAt,
    });
  } catch (error) {
    return errorOutcome(`${tool.name} failed: ${(error as Error).message}`);
  }
}

/** A call's JSONL `tool_use` input: its arguments with its id, or their raw text when they did not parse. */
function callInput(call: ModelToolCall): JsonObject {
  if (isObject(call.input)) return { ...(call.input as JsonObject), toolCallId: call.id };
  return call.rawArguments === undefined
    ? { toolCallId: call.id }
    : { rawArguments: call.rawArguments, toolCallId: call.id };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
