/**
 * sendbox's service worker (registered by src/pwa.ts, scope `/`). It makes the UI installable,
 * shows a page that says the box is not reachable when a navigation finds no network, and opens
 * the right agent when a notification is clicked. It caches nothing but that offline page: the
 * app and every API answer always come from the box, signed in.
 */
const CACHE = 'sendbox-offline-v1';
const OFFLINE_PAGE = '/offline.html';

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.add(new Request(OFFLINE_PAGE, { cache: 'reload' })))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((key) => key !== CACHE).map((key) => caches.delete(key))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  if (event.request.mode !== 'navigate') return;
  event.respondWith(
    fetch(event.request).catch(() => caches.match(OFFLINE_PAGE).then((page) => page ?? Response.error())),
  );
});

/** A click opens the agent the notification is about, in an open tab if there is one. */
self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const agentId = event.notification.data && event.notification.data.agentId;
  const url = typeof agentId === 'string' ? `/#agent=${encodeURIComponent(agentId)}` : '/';
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((windows) => {
      const open = windows.find((client) => new URL(client.url).origin === self.location.origin);
      if (!open) return self.clients.openWindow(url);
      open.postMessage({ type: 'open-agent', agentId });
      return open.focus();
    }),
  );
});
