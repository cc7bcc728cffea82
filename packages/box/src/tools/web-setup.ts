/**
 * The web tools as the operator configures them, from the box's environment:
 * - `web_search`: SearXNG (`SENDBOX_SEARXNG_URL`), else Brave (`BRAVE_SEARCH_API_KEY`), else xAI's
 *   server-side search when the model in use is xAI's (its key and model id); none: not offered,
 *   and `searchStatus` says how to turn it on (the settings panel shows it);
 * - `web_fetch`: always offered (an agent's profile may turn it off: catalog.ts), through the
 *   outbound client with the operator's `SENDBOX_WEB_ALLOW_PRIVATE_HOSTS`.
 */
import {
  chooseSearchBackend,
  searchConfigFromEnv,
  searchStatus,
  type SearchBackend,
} from './web-search/backends.ts';
import { pageFetcher, type PageFetcher } from './web-fetch/outbound.ts';

/** The model in use, when it is xAI's: its key and model id. */
export interface XaiModel {
  apiKey: string;
  model: string;
}

export interface WebSearchChoice {
  backend: SearchBackend | null;
  /** What the settings panel says: the backend in use, or how to enable one. */
  status: { backend: string | null; howToEnable: string };
}

export interface WebSetup {
  pages: PageFetcher;
  /** The search backend for the model in use (the model may change: the settings panel). */
  search(xai: XaiModel | undefined): WebSearchChoice;
}

/** Throws a message naming the variable when `SENDBOX_WEB_ALLOW_PRIVATE_HOSTS` is malformed. */
export function webSetupFromEnv(env: NodeJS.ProcessEnv): WebSetup {
  return {
    pages: pageFetcher(env.SENDBOX_WEB_ALLOW_PRIVATE_HOSTS),
    search(xai) {
      const backend = chooseSearchBackend(searchConfigFromEnv(env, xai));
      return { backend, status: searchStatus(backend) };
    },
  };
}
