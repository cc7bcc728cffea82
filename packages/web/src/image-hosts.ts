/**
 * The domains whose images load without a click (the gateway keeps the list in the data
 * dir: `listImageHosts`, `allowImageHost`). One copy per page, read once, shared by every
 * remote image; a domain covers its subdomains.
 */
import { useEffect, useSyncExternalStore } from 'react';
import type { ApiClient } from './api/client.ts';

let allowed: ReadonlySet<string> = new Set();
let reading: Promise<void> | null = null;
const listeners = new Set<() => void>();

function publish(hosts: readonly string[]): void {
  allowed = new Set(hosts);
  for (const listener of listeners) listener();
}

function snapshot(): ReadonlySet<string> {
  return allowed;
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Whether `host` is an allowed domain or one of its subdomains. */
export function isAllowedImageHost(host: string, domains: ReadonlySet<string>): boolean {
  let name = host.toLowerCase();
  for (;;) {
    if (domains.has(name)) return true;
    const dot = name.indexOf('.');
    if (dot === -1) return false;
    name = name.slice(dot + 1);
  }
}

export function useImageHosts(client: ApiClient | null): {
  allows: (host: string) => boolean;
  allow: (host: string) => Promise<void>;
} {
  const domains = useSyncExternalStore(subscribe, snapshot, snapshot);
  useEffect(() => {
    if (client === null || reading !== null) return;
    reading = client.listImageHosts().then(publish, (error: unknown) => {
      reading = null; // a later image asks again
      console.warn(`listImageHosts: ${String(error)}`);
    });
  }, [client]);
  return {
    allows: (host) => isAllowedImageHost(host, domains),
    allow: async (host) => {
      if (client !== null) publish(await client.allowImageHost(host));
    },
  };
}
