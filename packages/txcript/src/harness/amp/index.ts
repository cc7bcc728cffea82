/**
 * The Amp harness (`amp`): `~/.local/share/amp/threads/T-<uuid>.json`, one
 * JSON document per thread. Sessions convert from Amp, never into it: its
 * threads live on Amp's server now (store.ts).
 */
import { HARNESS_NAMES } from '../listing.ts';
import type { Harness } from '../types.ts';
import { ampCodec } from './codec.ts';
import { ampText, type AmpThread } from './records.ts';
import { ampStore } from './store.ts';

export const amp: Harness<AmpThread> = {
  id: 'amp',
  aliases: HARNESS_NAMES.amp,
  text: ampText,
  codec: ampCodec,
  textInSource: true,
  store: ampStore,
};

export { ampCodec, ampThreadId } from './codec.ts';
export { ampText, type AmpThread } from './records.ts';
export { ampStore, ampThreadsDir } from './store.ts';
export { ampToolToCommon, commonToolToAmp } from './tools.ts';
