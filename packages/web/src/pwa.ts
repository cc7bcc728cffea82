/**
 * The installed app's side of the page: registers the service worker (`public/sw.js`), shows
 * notifications through it (Android shows none made with `new Notification`), and opens the agent
 * a clicked notification names. A service worker needs a secure context (https, or localhost): on
 * plain http from another device the page works without one, and notifications are unavailable.
 */

export type NotificationSupport = 'unsupported' | NotificationPermission;

export function notificationSupport(): NotificationSupport {
  if (typeof Notification === 'undefined' || !window.isSecureContext) return 'unsupported';
  return Notification.permission;
}

/** Asks the browser for permission (only from a user's click, as browsers require). */
export async function requestNotificationPermission(): Promise<NotificationSupport> {
  if (notificationSupport() === 'unsupported') return 'unsupported';
  return Notification.requestPermission();
}

/** Opens `#agent=<id>`, which the app follows (App.tsx's hashchange). */
function openAgent(agentId: unknown): void {
  if (typeof agentId !== 'string') return;
  window.focus();
  window.location.hash = `agent=${encodeURIComponent(agentId)}`;
}

export function registerServiceWorker(): void {
  if (!('serviceWorker' in navigator) || !window.isSecureContext) return;
  navigator.serviceWorker.addEventListener('message', (event: MessageEvent<unknown>) => {
    const data = event.data as { type?: unknown; agentId?: unknown } | null;
    if (data?.type === 'open-agent') openAgent(data.agentId);
  });
  navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch((cause: unknown) => {
    // The app works without it; only installing and notifications need it.
    console.warn('sendbox: the service worker did not register:', cause);
  });
}

/** One notification per agent (a newer one replaces the older); false when none can be shown. */
export async function showNotification(notice: {
  title: string;
  body: string;
  agentId: string;
}): Promise<boolean> {
  if (notificationSupport() !== 'granted') return false;
  const options: NotificationOptions = {
    body: notice.body,
    tag: `sendbox-agent-${notice.agentId}`,
    icon: '/icons/icon-192.png',
    data: { agentId: notice.agentId },
  };
  const registration = await navigator.serviceWorker?.getRegistration().catch(() => undefined);
  if (registration) {
    await registration.showNotification(notice.title, options);
    return true;
  }
  const shown = new Notification(notice.title, options);
  shown.onclick = () => {
    openAgent(notice.agentId);
    shown.close();
  };
  return true;
}
