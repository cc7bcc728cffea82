/** Campfire's sessions: pi's store (../pi/store.ts) under Campfire's brand. */
import { piFamilyStore, type PiBrand } from '../pi/store.ts';
import type { SessionFileCacheOptions } from '../session-files.ts';
import type { SavingStore } from '../types.ts';

export const CAMPFIRE_BRAND: PiBrand = { harness: 'campfire', configDir: '.campfire', envPrefix: 'CAMPFIRE' };

export function campfireStore(
  env: NodeJS.ProcessEnv = process.env,
  cacheOptions: SessionFileCacheOptions = {},
): SavingStore {
  return piFamilyStore(CAMPFIRE_BRAND, env, cacheOptions);
}
