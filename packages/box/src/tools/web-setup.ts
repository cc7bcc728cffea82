/**
 * The web tools as the operator configures them, from the box's environment:
 * - `web_search`: SearXNG (`SENDBOX_SEARXNG_URL`), else Brave (`BRAVE_SEARCH_API_KEY`), else xAI's
 *   server-side search when the model is xAI's (its key from `XAI_API_KEY`); none: not offered,
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

export interface WebSetup {
  search: SearchBackend | null;
  /** What the settings panel says: the backend in use, or how to enable one. */
  searchStatus: { backend: string | null; howToEnable: string };
  pages: PageFetcher;
}

/** The model in use, when it is xAI's and its key is in the environment. */
export interface XaiModel {
  apiKey: string;
  model: string;
}

/** Throws a message naming the variable when `SENDBOX_WEB_ALLOW_PRIVATE_HOSTS` is malformed. */
export function webSetupFromEnv(env: NodeJS.ProcessEnv, xai?: XaiModel): WebSetup {
  const search = chooseSearchBackend(searchConfigFromEnv(env, xai));
  return {
    search,
    searchStatus: searchStatus(search),
    pages: pageFetcher(env.SENDBOX_WEB_ALLOW_PRIVATE_HOSTS),
  };
}
