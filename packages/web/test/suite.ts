/**
 * One browser test file's set-up: Debian's Chromium, a real box wired to the scripted model, and
 * the cleanup of both, registered as the file's `beforeAll`/`afterAll` (support.ts stays free of
 * the test runner, for the scripts that use it).
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import {
  callGateway,
  ensureBuilt,
  launchBrowser,
  modelEnv,
  openSignedInPage,
  startGateway,
  startModelServer,
  type ModelServer,
  type RunningGateway,
} from './support.ts';

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

type Viewport = Parameters<typeof openSignedInPage>[3];

/** One test file's browser, box and scripted model (see `browserSuite`). */
export interface BrowserSuite {
  readonly browser: Browser;
  readonly gateway: RunningGateway;
  readonly model: ModelServer;
  /** A fresh signed-in page of `target` (the suite's box by default); closed after the file. */
  open(
    viewport: Viewport,
    hash?: string,
    target?: RunningGateway,
  ): Promise<{ page: Page; problems: string[] }>;
  /** Sends `text` to the agent through the gateway (its nonce is derived from both). */
  prompt(agentId: string, text: string, target?: RunningGateway): Promise<void>;
  /** Creates an agent through the gateway and returns its id. */
  createAgent(name: string, target?: RunningGateway): Promise<string>;
  /**
   * Waits until the model has no scripted reply left and the agent is idle (`idle`, the default)
   * or at least not working (`not-working`: waiting on the user counts as settled); with
   * `turnEnded`, also until the conversation's last entry is the turn's end (a turn's last model
   * call, and its end, come after its last send).
   */
  settled(
    agentId: string,
    options?: {
      target?: RunningGateway;
      /** The model server whose replies must all be taken (the suite's by default). */
      model?: ModelServer;
      state?: 'idle' | 'not-working';
      turnEnded?: boolean;
    },
  ): Promise<void>;
  /**
   * Another box, stopped after the file: on the suite's model (`env` adds to the suite's), or with
   * no model configured at all (`model: false`).
   */
  startBox(options?: { env?: Record<string, string>; model?: boolean }): Promise<RunningGateway>;
}

/**
 * Registers the file's `beforeAll`/`afterAll`: builds `dist/` if stale, starts the scripted
 * model, Chromium and a box wired to the model (no model retries, so a scripted failure shows at
 * once; `model: false`, a box with no model configured and no model server), and closes every
 * page context, box, browser and the model after the file.
 */
export function browserSuite(
  options: { keepRequests?: boolean; env?: Record<string, string>; model?: boolean } = {},
): BrowserSuite {
  let browser: Browser | undefined;
  let gateway: RunningGateway | undefined;
  let model: ModelServer | undefined;
  const contexts: BrowserContext[] = [];
  const extraBoxes: RunningGateway[] = [];
  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined)
      throw new Error(`browserSuite: the ${what} is used before the suite's beforeAll ran`);
    return value;
  };
  const boxEnv = (extra: Record<string, string> = {}) => ({
    ...modelEnv(ready(model, 'model')),
    SENDBOX_MODEL_MAX_RETRIES: '0',
    ...options.env,
    ...extra,
  });
  const suite: BrowserSuite = {
    get browser() {
      return ready(browser, 'browser');
    },
    get gateway() {
      return ready(gateway, 'box');
    },
    get model() {
      return ready(model, 'model');
    },
    open: (viewport, hash = '', target) =>
      openSignedInPage(suite.browser, contexts, target ?? suite.gateway, viewport, hash),
    async createAgent(name, target) {
      const { agent } = await callGateway<{ agent: { id: string } }>(target ?? suite.gateway, 'createAgent', {
        name,
      });
      return agent.id;
    },
    async prompt(agentId, text, target) {
      await callGateway(target ?? suite.gateway, 'sendPrompt', {
        agentId,
        prompt: text,
        clientNonce: `${agentId}-${text}`,
      });
    },
    async settled(agentId, { target, model: server, state = 'idle', turnEnded = false } = {}) {
      await expect
        .poll(
          async () => {
            const rows = await callGateway<Array<{ id: string; state: string }>>(
              target ?? suite.gateway,
              'listAgents',
              {},
            );
            const now = rows.find((row) => row.id === agentId)?.state;
            if (
              (server ?? suite.model).pending() > 0 ||
              (state === 'idle' ? now !== 'idle' : now === 'working')
            )
              return false;
            if (!turnEnded) return true;
            const { entries } = await callGateway<{ entries: Array<{ kind: string }> }>(
              target ?? suite.gateway,
              'openAgent',
              { id: agentId },
            );
            return entries.at(-1)?.kind === 'turn-ended';
          },
          { timeout: 60_000 },
        )
        .toBe(true);
    },
    async startBox({ env, model: withModel = options.model ?? true } = {}) {
      const box = await startGateway(withModel ? boxEnv(env) : { ...options.env, ...env });
      extraBoxes.push(box);
      return box;
    },
  };
  beforeAll(async () => {
    ensureBuilt();
    if (options.model === false) {
      [browser, gateway] = await Promise.all([launchBrowser(), startGateway(options.env)]);
      return;
    }
    model = await startModelServer({ keepRequests: options.keepRequests ?? false });
    [browser, gateway] = await Promise.all([launchBrowser(), startGateway(boxEnv())]);
  });
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await Promise.all([gateway?.stop(), ...extraBoxes.map((box) => box.stop()), model?.close()]);
  });
  return suite;
}
