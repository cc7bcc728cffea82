/**
 * The `grok_bot` harness: Grok Bot's `agent-transcripts` JSONL, its per-agent
 * `store.db` UI ledger and its local gateway. See docs/formats/grok-bot.md.
 */
import { HARNESS_NAMES } from '../listing.ts';
import type { Harness } from '../types.ts';
import { grokBotCodec } from './codec.ts';
export { stripAddressTag } from './address-tag.ts';
import { GROK_BOT_HARNESS_ID } from './discover.ts';
import { createGrokBotStore } from './store.ts';
import { grokBotText } from './text.ts';
import type { GrokBotRecords } from './text.ts';

export const grokBot: Harness<GrokBotRecords> = {
  id: GROK_BOT_HARNESS_ID,
  aliases: HARNESS_NAMES.grok_bot,
  text: grokBotText,
  codec: grokBotCodec,
  store: (env?: NodeJS.ProcessEnv) => createGrokBotStore(env),
};

export { decodeJsonlBytes, grokBotText, parseGrokBotJsonl, recordLine, renderGrokBotJsonl } from './text.ts';
export type {
  GrokBotBlankLine,
  GrokBotLine,
  GrokBotMalformedLine,
  GrokBotRecordLine,
  GrokBotRecords,
  LineEnd,
} from './text.ts';
export {
  GROK_BOT_ID_NAMESPACE,
  ORPHAN_RESULT_NAME,
  UNIX_EPOCH,
  grokBotCodec,
  grokBotFromCommon,
  grokBotToCommon,
  isErrorResult,
  normalizeTimestamp,
  orphanResultId,
  syntheticCallId,
  toolFromNative,
  toolToNative,
} from './codec.ts';
export {
  LEDGER_DDL,
  LedgerError,
  ledgerRowsOf,
  openLedgerForWrite,
  openLedgerReadOnly,
  readLedgerFile,
  validateLedgerEntries,
} from './ledger-db.ts';
export type {
  LedgerOpenOptions,
  LedgerRead,
  LedgerReader,
  LedgerRow,
  LedgerSummary,
  LedgerWriter,
  RawRow as RawLedgerRow,
} from './ledger-db.ts';
export { parseLedgerEntries, parseLedgerEntry } from './ledger-entry.ts';
export type { ForeignLedgerEntry, LegacyLedgerEntry, ReadLedgerEntry } from './ledger-entry.ts';
export { ledgerToCommon } from './ledger-to-common.ts';
export type { LedgerConversion, LedgerToCommonContext } from './ledger-to-common.ts';
export { grokBotRoots, realPathInside } from './roots.ts';
export { assertSafeSessionId, isSafeSessionId, UnsafePathError } from '../session-id.ts';
export {
  FileExistsError,
  // The no-overwrite atomic write, under the name the package first exported it by.
  createFileAtomic as writeNewFileAtomically,
} from '../../fs/atomic.ts';
export type { GrokBotRoots } from './roots.ts';
export { DEFAULT_GATEWAY_TIMEOUT_MS, GatewayClient, GatewayError, readGatewayConfig } from './gateway.ts';
export type { GatewayClientOptions, GatewayConfig, GatewayErrorKind } from './gateway.ts';
export { GROK_BOT_HARNESS_ID, discoverGrokBot, scanJsonl } from './discover.ts';
export type { GrokBotDiscoverOptions } from './discover.ts';
export type { JsonlScan } from './summary-cache.ts';
export { GrokBotLoadError, createGrokBotStore, gatewayEntries } from './store.ts';
export type { GrokBotStore, GrokBotStoreOptions, LoadAttempt } from './store.ts';
export { titleFromUserText } from './title.ts';
export { isHiddenOrWake, splitHiddenText, type TextSegment } from './injected-text.ts';
