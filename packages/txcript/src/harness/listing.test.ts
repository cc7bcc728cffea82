import { describe, expect, it } from 'vitest';
import { sessionSources } from './listing.ts';
import { harnesses } from './registry.ts';

describe('listing', () => {
  it('names every harness that has a store, so `list` without --from shows its sessions', () => {
    const withStore = harnesses.filter((h) => h.store !== undefined).map((h) => h.id);
    expect(sessionSources.map((s) => s.id).sort()).toEqual(withStore.sort());
    for (const h of harnesses) {
      const source = sessionSources.find((s) => s.id === h.id);
      if (source !== undefined) expect(source.aliases, h.id).toEqual(h.aliases);
    }
  });
});
