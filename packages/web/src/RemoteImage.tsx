/**
 * An image at a remote address, from model output (Markdown, a text send's `images`, an
 * attachment card). The page never requests that address: the CSP allows images from this
 * origin, `data:` and `blob:` only, and a fetch would tell the remote host that the message
 * was read. It shows a placeholder naming the host until the user asks to load it (or has
 * allowed the host); the gateway then fetches it once (`/api/remoteImage`) and the page shows
 * the bytes from a `blob:` URL.
 */
import { useContext, useState, type ReactNode } from 'react';
import { ConversationContext } from './conversation-context.ts';
import { useBlob, useImageUrl } from './FileCard.tsx';
import { mediaTypeOf } from './files.ts';
import { useImageHosts } from './image-hosts.ts';

function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname.toLowerCase() || null;
  } catch {
    return null;
  }
}

export function RemoteImage({
  url,
  alt,
  children,
}: {
  url: string;
  alt: string;
  /** Renders the loaded image from its `blob:` URL. */
  children: (src: string) => ReactNode;
}) {
  const context = useContext(ConversationContext);
  const client = context?.client ?? null;
  const host = hostOf(url);
  const hosts = useImageHosts(client);
  const [requested, setRequested] = useState(false);
  const [allowError, setAllowError] = useState<string | null>(null);
  const wanted = client !== null && host !== null && (requested || hosts.allows(host));
  const { blob, error } = useBlob({ kind: 'remote', url }, wanted);
  const image = useImageUrl(blob, mediaTypeOf(blob?.type, url));
  if (image.url) return children(image.url);

  const problem = error ?? image.error ?? allowError;
  // An IP literal or IPv6 address is not a domain the user can allow.
  const allowable = host !== null && /^[a-z0-9.-]+$/.test(host) && !/^[0-9.]+$/.test(host);
  return (
    <span className="remote-image" data-testid="remote-image" data-host={host ?? ''} title={url}>
      <span className="remote-image-label">
        {alt ? <span className="remote-image-alt">{alt}</span> : null}
        <span>
          Image from <strong>{host ?? 'an unreadable address'}</strong>
        </span>
      </span>
      {problem ? (
        <span className="remote-image-error" role="alert">
          {problem}
        </span>
      ) : wanted ? (
        <span className="remote-image-status">Loading image…</span>
      ) : client !== null && host !== null ? (
        <span className="remote-image-actions">
          <button type="button" onClick={() => setRequested(true)} data-testid="remote-image-load">
            Load image
          </button>
          {allowable && (
            <button
              type="button"
              onClick={() =>
                void hosts.allow(host).catch((failure: unknown) => setAllowError(String(failure)))
              }
              data-testid="remote-image-allow"
            >
              Always load from {host}
            </button>
          )}
        </span>
      ) : null}
    </span>
  );
}
