/**
 * The toolbar's bell: whether this browser notifies while the tab is hidden, and whether the
 * message text goes in. Turning it on asks the browser's permission (from the click, as browsers
 * require); a refusal or a browser that cannot notify here is said in words, with what to do.
 */
import { useEffect, useId, useRef, useState } from 'react';
import type { NotificationChoice } from './preferences.ts';
import { notificationSupport, requestNotificationPermission, type NotificationSupport } from './pwa.ts';

const PROBLEMS: Partial<Record<NotificationSupport, string>> = {
  unsupported:
    'This browser cannot show notifications for this page: they need https, or the box opened as localhost.',
  denied:
    'The browser blocks notifications for this site. Allow them in its site settings (the icon left of the address), then turn this on again.',
};

function BellIcon() {
  return (
    <svg width="16" height="16" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <path
        fill="currentColor"
        d="M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22Zm7-6V11a7 7 0 0 0-5.5-6.84V3.5a1.5 1.5 0 0 0-3 0v.66A7 7 0 0 0 5 11v5l-2 2v1h18v-1l-2-2Z"
      />
    </svg>
  );
}

export function NotificationSettings({
  choice,
  onChange,
}: {
  choice: NotificationChoice;
  onChange: (choice: NotificationChoice) => void;
}) {
  const [open, setOpen] = useState(false);
  const [support, setSupport] = useState<NotificationSupport>(notificationSupport);
  const button = useRef<HTMLButtonElement>(null);
  const panel = useRef<HTMLDivElement>(null);
  const panelId = useId();
  const active = choice.enabled && support === 'granted';

  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      setOpen(false);
      button.current?.focus();
    };
    const onPointer = (event: PointerEvent) => {
      const target = event.target as Node;
      if (!panel.current?.contains(target) && !button.current?.contains(target)) setOpen(false);
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('pointerdown', onPointer);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('pointerdown', onPointer);
    };
  }, [open]);

  const toggle = async (enabled: boolean) => {
    if (!enabled) return onChange({ ...choice, enabled: false });
    const answer = support === 'granted' ? support : await requestNotificationPermission();
    setSupport(answer);
    onChange({ ...choice, enabled: answer === 'granted' });
  };

  const problem = PROBLEMS[support];
  return (
    <span className="notification-settings">
      <button
        ref={button}
        type="button"
        aria-expanded={open}
        aria-controls={panelId}
        aria-label={`Notifications: ${active ? 'on' : 'off'}`}
        title={`Notifications: ${active ? 'on' : 'off'}`}
        data-testid="notifications-open"
        data-active={active}
        onClick={() => {
          setSupport(notificationSupport());
          setOpen((value) => !value);
        }}
      >
        <BellIcon />
      </button>
      {open && (
        <div
          ref={panel}
          id={panelId}
          className="notification-panel"
          role="group"
          aria-label="Notifications"
          data-testid="notifications-panel"
        >
          <label>
            <input
              type="checkbox"
              checked={active}
              disabled={support === 'unsupported'}
              onChange={(event) => void toggle(event.target.checked)}
              data-testid="notify-toggle"
            />
            Notify me when an agent waits for me or finishes, while this tab is hidden
          </label>
          <label>
            <input
              type="checkbox"
              checked={choice.includeText}
              disabled={!active}
              onChange={(event) => onChange({ ...choice, includeText: event.target.checked })}
              data-testid="notify-text-toggle"
            />
            Show the message text in notifications (your system may show it on a locked screen)
          </label>
          {problem && (
            <p className="notification-problem" role="status" data-testid="notify-problem">
              {problem}
            </p>
          )}
        </div>
      )}
    </span>
  );
}
