/**
 * The Hermes Agent harness (`hermes`): sessions in `~/.hermes/state.db`.
 * Sessions convert from Hermes, never into it: it has no import, and its
 * database belongs to the running agent (store.ts).
 */
import { HARNESS_NAMES } from '../listing.ts';
import type { Harness } from '../types.ts';
import { hermesCodec } from './codec.ts';
import { hermesText, type HermesExport } from './records.ts';
import { hermesStore } from './store.ts';

export const hermes: Harness<HermesExport> = {
  id: 'hermes',
  aliases: HARNESS_NAMES.hermes,
  text: hermesText,
  codec: hermesCodec,
  store: hermesStore,
};

export { hermesCodec } from './codec.ts';
export { hermesText, type HermesExport } from './records.ts';
export { hermesDbPath, hermesStore, readHermesExport } from './store.ts';
export { commonToolToHermes, hermesToolToCommon } from './tools.ts';
