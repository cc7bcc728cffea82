/**
 * The Simple harness: txcript's interchange document, one JSON object
 * (docs/formats/simple.md). It has no managed location, so no store.
 */
import type { Harness } from '../types.ts';
import { type SimpleCodecOptions, commonToSimplePieces, createSimpleCodec } from './codec.ts';
import { type SimpleDocument, simpleText } from './text.ts';

export function createSimpleHarness(options: SimpleCodecOptions = {}): Harness<SimpleDocument> {
  return {
    id: 'simple',
    aliases: [],
    text: simpleText,
    codec: createSimpleCodec(options),
    renderCommon: commonToSimplePieces,
  };
}

export const simple: Harness<SimpleDocument> = createSimpleHarness();

export {
  SIMPLE_TOOL_ID_NAMESPACE,
  commonToSimple,
  commonToSimplePieces,
  sessionIdForFile,
  simpleToCommon,
  syntheticToolId,
  type SimpleCodecOptions,
} from './codec.ts';
export {
  SimpleFormatError,
  parseSimple,
  renderSimple,
  renderSimplePieces,
  simpleText,
  type SimpleDocument,
} from './text.ts';
export { formatUtc, isRfc3339, parseRfc3339, toUtcRfc3339 } from './timestamp.ts';
