export type * from './model/common.ts';
export type * from './harness/types.ts';
export { toolFromCanonical, toolToCanonical } from './model/tool.ts';
export { jsonEqual } from './model/json.ts';
export { uuidV5 } from './model/uuid.ts';
export {
  SIMPLE_TOOL_ID_NAMESPACE,
  SimpleFormatError,
  commonToSimple,
  createSimpleHarness,
  parseSimple,
  renderSimple,
  sessionIdForFile,
  simple,
  simpleToCommon,
  type SimpleCodecOptions,
  type SimpleDocument,
} from './harness/simple/index.ts';
export * from './harness/grok-bot/index.ts';
export { UnknownHarnessError, findHarness, harnesses } from './harness/registry.ts';
export * from './continue/index.ts';
// Content search, for a long-lived index over the sessions of a context (the box's message search).
export { createContext, type CliContext, type CliIo } from './cli/context.ts';
export { CliError } from './cli/errors.ts';
export { SessionIndex } from './search/engine.ts';
export { findHits, foldCase, type Hit, type Snippet } from './search/hits.ts';
export { KINDS, type Kind } from './search/kinds.ts';
export { parseQuery } from './search/query.ts';
export { splitRowId, rowId } from './search/index-db.ts';
