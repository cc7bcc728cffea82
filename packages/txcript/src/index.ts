export type * from './model/common.ts';
export type * from './harness/types.ts';
export { toolFromCanonical, toolToCanonical } from './model/tool.ts';
export { jsonEqual } from './model/json.ts';
export { uuidV5 } from './model/uuid.ts';
