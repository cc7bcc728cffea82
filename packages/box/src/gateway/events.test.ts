/**
 * The event stream's handover from backlog to live events, with the real
 * host: entries committed while the backlog is being read arrive once, and
 * entries committed between the read and going live are not lost.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalAgentHost } from '../host/agent-host.ts';
import type { AgentHost } from '../host/types.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { EventStreams, openEventStream } from './events.ts';
import { openTestHost } from './test-host.ts';
import { entryOf, makeTempDir, SseReader } from './test-support.ts';
import { testModel } from './test-model.ts';

let dataDir: string;
let host: LocalAgentHost;
let nonce = 0;

beforeAll(async () => {
  dataDir = await makeTempDir('sendbox-events-');
  host = await openTestHost(dataDir, testModel());
});
afterAll(async () => {
  await host.close();
  await fs.promises.rm(dataDir, { recursive: true, force: true });
});

/** Runs one whole turn (its entries committed and their events emitted). */
async function turn(agentId: string, word: string): Promise<void> {
  await host.sendPrompt({ agentId, prompt: `say:${word}`, clientNonce: `n${++nonce}` });
  await host.idle(agentId);
}

/** The host, but a turn runs to completion before (or after) the backlog read. */
function racingHost(agentId: string, when: 'before-read' | 'after-read', word: string): AgentHost {
  return new Proxy(host, {
    get(target, key, receiver) {
      if (key !== 'entriesAfter') return Reflect.get(target, key, receiver) as unknown;
      return async (id: string, after: number): Promise<SequencedEntry[]> => {
        if (when === 'before-read') await turn(agentId, word);
        const rows = await target.entriesAfter(id, after);
        if (when === 'after-read') await turn(agentId, word);
        return rows;
      };
    },
  });
}

async function entriesUntil(stream: ReadableStream<Uint8Array>, word: string): Promise<number[]> {
  const reader = new SseReader(new Response(stream));
  const events = await reader.collect(
    (event) => event.event === 'entry' && JSON.stringify(event.data).includes(`echo: ${word}`),
  );
  await reader.cancel();
  return events.filter((event) => event.event === 'entry').map((event) => entryOf(event).seq);
}

/** The ledger's seqs, up to `through` (the stream is read up to the echo; the turn-ended entry follows it). */
async function ledgerSeqs(agentId: string, through = Infinity): Promise<number[]> {
  return (await host.entriesAfter(agentId, 0)).map((entry) => entry.seq).filter((seq) => seq <= through);
}

describe('openEventStream', () => {
  it('sends an entry committed during the backlog read once, not twice', async () => {
    const agent = await host.createAgent({ name: 'race-before' });
    await turn(agent.id, 'earlier');
    const stream = await openEventStream(
      racingHost(agent.id, 'before-read', 'during'),
      { agentId: agent.id, after: 0 },
      new EventStreams(),
    );
    // A turn after the stream is live marks the end of what to compare.
    await turn(agent.id, 'marker');
    const got = await entriesUntil(stream, 'marker');
    expect(got).toEqual(await ledgerSeqs(agent.id, got.at(-1)));
  });

  it('does not lose an entry committed between the backlog read and going live', async () => {
    const agent = await host.createAgent({ name: 'race-after' });
    await turn(agent.id, 'earlier');
    const stream = await openEventStream(
      racingHost(agent.id, 'after-read', 'between'),
      { agentId: agent.id, after: 0 },
      new EventStreams(),
    );
    // A turn after the stream is live marks the end of what to compare.
    await turn(agent.id, 'marker');
    const got = await entriesUntil(stream, 'marker');
    expect(got).toEqual(await ledgerSeqs(agent.id, got.at(-1)));
  });

  it('carries state and roster events of every agent, entries of its own agent only', async () => {
    const mine = await host.createAgent({ name: 'mine' });
    const other = await host.createAgent({ name: 'other' });
    const stream = await openEventStream(host, { agentId: mine.id, after: 0 }, new EventStreams());
    await turn(other.id, 'elsewhere');
    await turn(mine.id, 'here');
    const reader = new SseReader(new Response(stream));
    const events = await reader.collect(
      (event) => event.event === 'entry' && JSON.stringify(event.data).includes('echo: here'),
    );
    await reader.cancel();
    expect(
      events.some((e) => e.event === 'state' && (e.data as { agentId: string }).agentId === other.id),
    ).toBe(true);
    expect(events.some((e) => e.event === 'roster')).toBe(true);
    const entrySeqs = events.filter((e) => e.event === 'entry').map((e) => entryOf(e).seq);
    expect(entrySeqs).toEqual(await ledgerSeqs(mine.id, entrySeqs.at(-1)));
    expect(JSON.stringify(events)).not.toContain('echo: elsewhere');
  });

  it('ends the stream of a client that stops reading, after what was queued', async () => {
    const agent = await host.createAgent({ name: 'slow reader' });
    const streams = new EventStreams();
    const stream = await openEventStream(host, { agentId: agent.id, after: 0 }, streams, 512);
    expect(streams.size).toBe(1);
    await turn(agent.id, 'flood');
    await turn(agent.id, 'more');
    // Nothing was read while the turns ran: the stream gave up on the client.
    expect(streams.size).toBe(0);
    const reader = new SseReader(new Response(stream));
    const seqs: number[] = [];
    for (let event = await reader.next(); event !== null; event = await reader.next()) {
      if (event.event === 'entry') seqs.push(entryOf(event).seq);
    }
    // The client has a prefix of the ledger and resumes from its last seq.
    const ledger = await ledgerSeqs(agent.id);
    expect(seqs.length).toBeGreaterThan(0);
    expect(seqs.length).toBeLessThan(ledger.length);
    expect(seqs).toEqual(ledger.slice(0, seqs.length));
  });

  it('fails before streaming when the agent is unknown, leaving no subscription behind', async () => {
    const streams = new EventStreams();
    await expect(openEventStream(host, { agentId: 'nobody', after: 0 }, streams)).rejects.toMatchObject({
      status: 404,
    });
    expect(streams.size).toBe(0);
  });
});
