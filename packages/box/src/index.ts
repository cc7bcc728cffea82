/**
 * @sendbox/box: the host runtime (agents, turns, tools, model providers,
 * attachments, secrets, the transcript writer). The HTTP gateway and the
 * `sendbox` CLI sit on top of `AgentHost`.
 */
export * from './host/types.ts';
export {
  createAgentHost,
  LocalAgentHost,
  DEFAULT_MAX_STEPS_PER_TURN,
  type AgentHostOptions,
} from './host/agent-host.ts';
export {
  AgentSession,
  envNameFor,
  TURN_TEXTS,
  type Question,
  type UnreadState,
} from './host/agent-session.ts';
export { agentPaths, agentsRoot, isSafeAgentId, AGENT_ID_PATTERN, type AgentPaths } from './host/layout.ts';
export { readProfile, writeProfile, profileSchema, type Profile } from './host/profile.ts';
export { StoreLock } from './host/store-lock.ts';
export { TurnStateMachine } from './host/turn-state.ts';
export {
  runTurn,
  type TurnDriver,
  type TurnOptions,
  type TurnTexts,
  type ToolCallReport,
} from './host/turn.ts';
export { SendReminderCounter, DEFAULT_SEND_REMINDER_EVERY } from './host/middleware/send-reminder.ts';
export { withInjections, type InjectionConfig } from './host/middleware/injections.ts';
export { TextOnlyGuard, type TextOnlyVerdict } from './host/middleware/text-only.ts';

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

export { shellTool, type ShellOptions } from './tools/shell.ts';
export { readTool } from './tools/read.ts';
export { writeTool } from './tools/write.ts';
export { updateTodosTool } from './tools/update-todos.ts';
export { handleSendMessage, type SendOutcome, type SendGateContext } from './tools/send-message.ts';
export type { HostTool, ToolContext, ToolEnvelope, ToolOutcome, TodoItem } from './tools/types.ts';

export { TranscriptWriter, type TranscriptRecord, type TranscriptBlock } from './transcript/writer.ts';
export { historyFromRecords, modelOutputFor } from './transcript/model-view.ts';

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
