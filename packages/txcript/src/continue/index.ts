/** `txcript continue` as a library: continue a conversation as a new session in another harness. */
export {
  CONTINUE_TARGET_IDS,
  ContinueTargetError,
  assertContinueTarget,
  continueSession,
  resumeCommandFor,
  type ContinueOptions,
  type ContinueResult,
} from './continue-session.ts';
export {
  DEFAULT_DESCRIPTION,
  DEFAULT_NAME,
  MAX_TITLE_NAME,
  MINT_STEPS,
  MintError,
  agentIdentity,
  continuedDescription,
  mintGrokBotAgent,
  type MintOptions,
  type MintPhase,
  type MintResult,
  type MintStep,
} from './grok-bot-mint.ts';
export { launch, shellLine, shellWord, type LaunchOutcome, type SpawnLike } from './launch.ts';
export { MetadataError, metadataString, parseMetadata } from './metadata.ts';
export { BOX_TOOL, toBoxTool, withBoxTools } from './box-tools.ts';
