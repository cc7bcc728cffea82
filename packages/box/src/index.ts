/**
 * @sendbox/box: the host runtime (agents, turns, tools, model providers,
 * attachments, secrets, the transcript writer). The HTTP gateway and the
 * `sendbox` CLI sit on top of `AgentHost`.
 */
export * from './host/types.ts';
export { HostError } from './agent/errors.ts';
export type { HostEvent } from './agent/events.ts';
export { StoreWriteError } from './stores/errors.ts';
export type { SequencedEntry } from './stores/ledger.ts';
export type { PendingInput } from './stores/inbox.ts';
export {
  createAgentHost,
  LocalAgentHost,
  DEFAULT_MAX_STEPS_PER_TURN,
  type AgentHostOptions,
} from './host/agent-host.ts';
export { AgentSession, envNameFor, type Question } from './agent/agent-session.ts';
export type { UnreadState } from './agent/unread.ts';
export { TURN_TEXTS } from './agent/turn-texts.ts';
export {
  agentPaths,
  agentsRoot,
  isSafeAgentId,
  AGENT_ID_PATTERN,
  type AgentPaths,
} from './stores/files/layout.ts';
export { readProfile, writeProfile, profileSchema, type Profile } from './stores/files/profile.ts';
export { StoreLock } from './stores/files/store-lock.ts';
export { TurnStateMachine, type TurnState } from './agent/turn-state.ts';
export {
  runTurn,
  type TurnDriver,
  type TurnOptions,
  type TurnTexts,
  type ToolCallReport,
} from './agent/turn.ts';
export { SendReminderCounter, DEFAULT_SEND_REMINDER_EVERY } from './context/send-reminder.ts';
export { withInjections, injectionsLayer, type InjectionConfig } from './context/injections.ts';
export { modelCallView, type ContextLayer, type ModelCallView } from './context/model-call.ts';
export {
  Compaction,
  isSummaryRecord,
  summaryRecordText,
  type CompactionIo,
  type CompactionOptions,
  type KeptState,
  type ModelCallPlan,
} from './context/compaction.ts';
export { TokenCounter } from './context/tokens.ts';
export { contextWindowFor, knownContextWindow, type ContextWindow } from './context/context-window.ts';
export { systemPrompt } from './context/system-prompt.ts';
export { TextOnlyGuard, type TextOnlyVerdict } from './agent/text-only.ts';

export {
  providerFromEnv,
  openAiCompatibleProvider,
  statusOf as modelStatusOf,
  scriptedProvider,
  DEFAULT_XAI_MODEL,
  DEFAULT_MODEL_TIMEOUT_MS,
  HOW_TO_CONFIGURE_MODEL,
  type ProviderFromEnv,
  type ScriptedProvider,
  type ScriptedStep,
} from './providers/index.ts';
export { aiSdkProvider, type AiSdkProviderOptions } from './providers/ai-sdk.ts';
export {
  ModelCallError,
  type ModelMessage,
  type ModelStatus,
  type ModelProvider,
  type ModelStepRequest,
  type ModelStepResult,
  type ModelToolCall,
  type ModelToolSpec,
} from './providers/types.ts';

export {
  AttachmentStore,
  AttachmentTooLargeError,
  DEFAULT_MAX_ATTACHMENT_BYTES,
  type StoredFile,
} from './attachments/store.ts';
export { mediaTypeOf, extensionOf } from './attachments/media-type.ts';
export { SecretStore, loadOrCreateSecretKey, keyFilePath, SECRET_NAME_PATTERN } from './secrets/store.ts';
export { scrubberFor, noScrub, type Scrubber } from './secrets/scrub.ts';
export { openInSandbox, writeInSandbox, OutsideSandboxError, NotRegularFileError } from './sandbox/paths.ts';
export { detectConfinement, type Confinement, type SandboxStatus } from './sandbox/confinement.ts';
export { SandboxDisks } from './sandbox/disk-quota.ts';
export { addressKind, type AddressKind } from './net/addresses.ts';
export { OutboundError, type OutboundFailure } from './net/errors.ts';
export {
  OutboundClient,
  type FetchFunction,
  type OutboundLimits,
  type OutboundOptions,
} from './net/fetch.ts';
export {
  checkHost,
  connectChecked,
  parseHostList,
  SYSTEM_NETWORK,
  type NetworkView,
  type ReachPolicy,
  type ResolvedAddress,
} from './net/reach.ts';

export { toolCatalog, type ToolCatalogOptions } from './tools/catalog.ts';
export { shellTool, type ShellOptions } from './tools/shell/index.ts';
export { readTool } from './tools/read/index.ts';
export { writeTool } from './tools/write/index.ts';
export { updateTodosTool } from './tools/update-todos/index.ts';
export { handleSendMessage, type SendOutcome, type SendGateContext } from './tools/send-message/index.ts';
export type { HostTool, ToolContext, ToolEnvelope, ToolOutcome, TodoItem } from './tools/types.ts';

export { TranscriptWriter } from './stores/transcript-writer.ts';
export type { TranscriptRecord, TranscriptBlock, TranscriptLog } from './stores/transcript.ts';
export type { LedgerStore } from './stores/ledger.ts';
export type { InboxStore } from './stores/inbox.ts';
export { JsonlFile } from './stores/files/jsonl.ts';
export { historyFromRecords, modelOutputFor } from './context/model-view.ts';

export * from './gateway/index.ts';
// The work tools (issue 19): each its folder under tools/.
export { editTool } from './tools/edit/index.ts';
export { grepTool, type GrepOptions } from './tools/grep/index.ts';
export { globTool } from './tools/glob/index.ts';
export { lsTool } from './tools/ls/index.ts';
export { deleteTool } from './tools/delete/index.ts';
export { webSearchTool } from './tools/web-search/index.ts';
export {
  chooseSearchBackend,
  searchStatus,
  type SearchBackend,
  type Reference,
} from './tools/web-search/backends.ts';
export { webFetchTool, type PageFetch, type WebFetchOptions } from './tools/web-fetch/index.ts';
export { todosFromRecords } from './tools/update-todos/todos-from-records.ts';
export { withImages, type ImageViewOptions, type ModelImageData } from './context/images.ts';
