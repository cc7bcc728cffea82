/** Lets a bubble ask the conversation to bring another message into view (`sand-msg:` links). */
import { createContext } from 'react';

export interface Navigation {
  scrollToEntry: (id: string) => void;
}

export const NavigationContext = createContext<Navigation>({ scrollToEntry: () => undefined });
