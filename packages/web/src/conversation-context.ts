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
  /**
   * Puts the keyboard back in the composer: after a widget or secret is answered, the control
   * that had focus is gone or disabled, and the conversation goes on from the composer.
   */
  focusComposer: () => void;
  /**
   * Answered secret requests whose secret this agent does not hold, as the box said on opening
   * it: a duplicate's copied requests (secrets are never copied).
   */
  secretRequestsNotHeld: ReadonlySet<string>;
}

export const ConversationContext = createContext<ConversationContextValue | null>(null);
