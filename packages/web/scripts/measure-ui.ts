/**
 * DEV AID (figures, not a test) for the web UI, against the real gateway and a scripted
 * loopback model, in Debian's chromium:
 *
 * 1. streaming: each `send_message` argument delta, from the moment the model server writes
 *    it to the first animation frame after the page shows it (same machine, both clocks are
 *    epoch-based `timeOrigin + now()`): p50 / p99 over every delta (target p99 < 50 ms);
 * 2. a 1 MB single-line message: navigation to the first frame after its bubble is in the
 *    page, median of the runs (target < 1 s).
 *
 * The first paint of a 10,000-entry agent is scripts/measure-paint.ts.
 *
 *   npx tsx packages/web/scripts/measure-ui.ts [deltas=400] [runs=5]
 */
import {
  callGateway,
  ensureBuilt,
  launchBrowser,
  modelEnv,
  send,
  startGateway,
  startModelServer,
} from '../test/support.ts';

const deltaCount = Number(process.argv[2] ?? 400);
const runs = Number(process.argv[3] ?? 5);
const epochNow = () => performance.timeOrigin + performance.now();

const written = new Map<string, number>();
ensureBuilt();
const model = await startModelServer({
  onDelta: (piece) => {
    const word = /w\d+/.exec(piece)?.[0];
    if (word && !written.has(word)) written.set(word, epochNow());
  },
});
const gateway = await startGateway(modelEnv(model));
const browser = await launchBrowser();
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
try {
  // 1. Streaming.
  const { agent } = await callGateway<{ agent: { id: string } }>(gateway, 'createAgent', { name: 'Stream' });
  // Signed in as a person is: through a login link (the page holds no token).
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await gateway.signIn(context);
  const page = await context.newPage();
  await page.goto(`${gateway.url}#agent=${agent.id}`);
  await page.getByTestId('composer-input').waitFor();
  await page.evaluate(() => {
    const shown: Record<string, number> = {};
    (window as unknown as { shown: Record<string, number> }).shown = shown;
    let last = 0;
    new MutationObserver(() => {
      const bubble = document.querySelector('[data-testid="streaming-bubble"]');
      const words = bubble?.textContent?.match(/w\d+/g) ?? [];
      const fresh = words.slice(last);
      last = words.length;
      if (fresh.length === 0) return;
      requestAnimationFrame(() => {
        const at = performance.timeOrigin + performance.now();
        for (const word of fresh) shown[word] ??= at;
      });
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  const content = Array.from({ length: deltaCount }, (_, i) => `w${i}`).join(' ');
  model.reply({ ...send({ type: 'text', content }), streamDelayMs: 5 });
  await callGateway(gateway, 'sendPrompt', {
    agentId: agent.id,
    prompt: 'stream',
    clientNonce: 'bench-stream',
  });
  await page
    .locator('[data-testid="bubble"]', { hasText: `w${deltaCount - 1}` })
    .waitFor({ timeout: 60_000 });
  const shown = await page.evaluate(() => (window as unknown as { shown: Record<string, number> }).shown);
  const latencies = [...written]
    .map(([word, at]) => (shown[word] === undefined ? NaN : shown[word] - at))
    .filter((ms) => Number.isFinite(ms))
    .sort((a, b) => a - b);
  console.log(
    `streaming delta -> painted: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, ` +
      `max ${latencies.at(-1)?.toFixed(1)} ms over ${latencies.length} of ${written.size} deltas (target p99 < 50 ms)`,
  );
  await page.close();

  // 2. A 1 MB single-line message.
  const { agent: huge } = await callGateway<{ agent: { id: string } }>(gateway, 'createAgent', {
    name: 'Huge',
  });
  model.reply(send({ type: 'text', content: 'x'.repeat(1_000_000) }));
  await callGateway(gateway, 'sendPrompt', { agentId: huge.id, prompt: 'huge', clientNonce: 'bench-huge' });
  for (let i = 0; i < 200 && model.pending() > 0; i++) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 1000));
  const paints: number[] = [];
  for (let run = 0; run < runs; run++) {
    const tab = await context.newPage();
    await tab.goto(`${gateway.url}#agent=${huge.id}`);
    await tab.getByTestId('long-text').waitFor({ timeout: 30_000 });
    const ms = await tab.evaluate(
      () => new Promise<number>((resolve) => requestAnimationFrame(() => resolve(performance.now()))),
    );
    paints.push(ms);
    await tab.close();
  }
  paints.sort((a, b) => a - b);
  console.log(
    `1 MB single-line message, navigation -> painted: median ${percentile(paints, 50).toFixed(0)} ms, ` +
      `min ${paints[0]?.toFixed(0)} ms, max ${paints.at(-1)?.toFixed(0)} ms (${runs} runs; target < 1000 ms)`,
  );
} finally {
  await browser.close();
  await gateway.stop();
  await model.close();
}
