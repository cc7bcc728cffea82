/**
 * Renewing the page's access after the box refused it (a restart mints new credentials):
 * the page reloads itself, at most once per `RELOAD_EVERY_MS`, so a box that keeps refusing
 * cannot put the tab in a reload loop. Drafts survive (drafts.ts), the open agent too (its hash).
 */
const KEY = 'sendbox.reloadedForAccessAt';
export const RELOAD_EVERY_MS = 30_000;

export function renewAccess(now = Date.now()): boolean {
  let last = 0;
  try {
    last = Number(sessionStorage.getItem(KEY) ?? 0);
    if (now - last < RELOAD_EVERY_MS) return false;
    sessionStorage.setItem(KEY, String(now));
  } catch {
    return false; // no storage: no way to tell a loop, so do not reload
  }
  window.location.reload();
  return true;
}
