/**
 * The Hermes Agent harness (`hermes`): sessions in `~/.hermes/state.db`.
 * Sessions convert from Hermes, never into it: it has no import, and its
 * database belongs to the running agent (store.ts).
 */
import { HARNESS_NAMES } from '../listing.ts';
import { sessionsHolding } from '../sqlite-text-check.ts';
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
  // A terminal call's timeout is seconds in the database, milliseconds in Common (tools.ts).
  derivedNumbers: true,
  mayHold: (sessions, needles) =>
    sessionsHolding(
      sessions,
      [
        { table: 'sessions', sessionColumn: 'id' },
        { table: 'messages', sessionColumn: 'session_id' },
      ],
      needles,
    ),
};

export { hermesCodec } from './codec.ts';
export { hermesText, type HermesExport } from './records.ts';
export { hermesDbPath, hermesStore, readHermesExport } from './store.ts';
export { commonToolToHermes, hermesToolToCommon } from './tools.ts';
