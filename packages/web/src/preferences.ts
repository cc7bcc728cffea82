/**
 * Preferences kept in localStorage: the colour theme (follows the system until the user picks
 * one) and the bubble style, which only change CSS, and whether this browser shows notifications
 * (notifications.ts), with or without message text.
 */
import { useCallback, useEffect, useState } from 'react';

export type ThemeChoice = 'system' | 'light' | 'dark';
export type BubbleStyle = 'cards' | 'plain';

const THEME_KEY = 'sendbox.theme';
const BUBBLE_STYLE_KEY = 'sendbox.bubbleStyle';
const NOTIFY_KEY = 'sendbox.notify';
const NOTIFY_TEXT_KEY = 'sendbox.notifyText';

function read<T extends string>(key: string, allowed: readonly T[], fallback: T): T {
  try {
    const value = localStorage.getItem(key);
    return allowed.includes(value as T) ? (value as T) : fallback;
  } catch {
    return fallback; // storage disabled: keep the default for this visit
  }
}

function write(key: string, value: string): void {
  try {
    localStorage.setItem(key, value);
  } catch {
    // Storage disabled or full: the choice lasts for this visit only.
  }
}

function usePersisted<T extends string>(
  key: string,
  allowed: readonly T[],
  fallback: T,
): [T, (value: T) => void] {
  const [value, setValue] = useState<T>(() => read(key, allowed, fallback));
  const update = useCallback(
    (next: T) => {
      setValue(next);
      write(key, next);
    },
    [key],
  );
  return [value, update];
}

const darkQuery = () => window.matchMedia('(prefers-color-scheme: dark)');

/**
 * The toggle's next choice, so that the first click always changes the look: from following
 * the system, the other theme; then the system's own, pinned; then back to following it.
 */
export function nextTheme(choice: ThemeChoice, system: 'light' | 'dark'): ThemeChoice {
  const other = system === 'dark' ? 'light' : 'dark';
  if (choice === 'system') return other;
  return choice === other ? system : 'system';
}

/** The theme choice, the system's theme, and the applied theme on `<html data-theme>`. */
export function useTheme(): {
  choice: ThemeChoice;
  system: 'light' | 'dark';
  applied: 'light' | 'dark';
  setChoice(choice: ThemeChoice): void;
} {
  const [choice, setChoice] = usePersisted<ThemeChoice>(THEME_KEY, ['system', 'light', 'dark'], 'system');
  const [systemDark, setSystemDark] = useState(() => darkQuery().matches);
  useEffect(() => {
    const query = darkQuery();
    const onChange = () => setSystemDark(query.matches);
    query.addEventListener('change', onChange);
    return () => query.removeEventListener('change', onChange);
  }, []);
  const system = systemDark ? 'dark' : 'light';
  const applied = choice === 'system' ? system : choice;
  useEffect(() => {
    document.documentElement.dataset.theme = applied;
    document.documentElement.style.colorScheme = applied;
  }, [applied]);
  return { choice, system, applied, setChoice };
}

export function useBubbleStyle(): [BubbleStyle, (style: BubbleStyle) => void] {
  return usePersisted<BubbleStyle>(BUBBLE_STYLE_KEY, ['cards', 'plain'], 'cards');
}

export interface NotificationChoice {
  /** Notify while the tab is hidden (the browser's permission is asked for when this is turned on). */
  enabled: boolean;
  /** Put the message's text in the notification; off by default, as a lock screen shows it. */
  includeText: boolean;
}

export function useNotificationChoice(): [NotificationChoice, (choice: NotificationChoice) => void] {
  const [enabled, setEnabled] = usePersisted(NOTIFY_KEY, ['on', 'off'], 'off');
  const [text, setText] = usePersisted(NOTIFY_TEXT_KEY, ['shown', 'hidden'], 'hidden');
  const update = useCallback(
    (choice: NotificationChoice) => {
      setEnabled(choice.enabled ? 'on' : 'off');
      setText(choice.includeText ? 'shown' : 'hidden');
    },
    [setEnabled, setText],
  );
  return [{ enabled: enabled === 'on', includeText: text === 'shown' }, update];
}
