/** What every bubble of the open conversation shares: the client, the agent, the lightbox. */
import { createContext } from 'react';
import type { ApiClient } from './api/client.ts';

export interface ConversationContextValue {
  client: ApiClient;
  agentId: string;
  /** The demo agent: nothing in it can be answered. */
  readOnly: boolean;
  openLightbox: (image: { src: string; caption: string }) => void;
  /** The box's link template for cursor-agent cards (`{bcId}` is replaced). */
  cursorAgentUrl: string;
}

export const ConversationContext = createContext<ConversationContextValue | null>(null);
