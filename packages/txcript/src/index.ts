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
