/**
 * This tab's half of the browser session (docs/gateway.md, "Signing in"): the tab proof the
 * gateway checks against the HttpOnly cookie on every API call. Another server on this host
 * receives the cookie too (cookies ignore ports), but never the proof: the login redirect
 * hands it over in the URL fragment, which no server receives, and the page keeps it in
 * `sessionStorage`, which belongs to this origin (port included) and this tab.
 *
 * A tab opened without it (a bookmark, a typed address) asks the open tabs of this origin
 * over a BroadcastChannel, which no other origin can join; with none open, it needs a login link.
 */
const STORAGE_KEY = 'sendbox.session';
const CHANNEL = 'sendbox-session';
const FRAGMENT = /(?:^#|&)session=([A-Za-z0-9_-]{43})(?=&|$)/;
/** How long a new tab waits for an open tab to answer. */
const ASK_TIMEOUT_MS = 400;

type Message =
  { kind: 'ask'; nonce: string } | { kind: 'tell'; nonce: string; proof: string } | { kind: 'signed-out' };

export interface TabSession {
  /** The proof to send in `X-Sendbox-Session`; null once signed out. */
  proof(): string | null;
  /** Asks the other tabs again (after a 401: the browser signed in anew and got another session). */
  refresh(): Promise<string | null>;
  /** Forgets the proof here and in every tab of this origin. */
  signOut(): void;
  /** Called when this tab lost its proof because another tab signed out. */
  onSignedOut(listener: () => void): () => void;
}

/** Takes the proof out of the address bar (`#session=…`), keeping the rest of the fragment. */
function proofFromFragment(): string | null {
  const match = FRAGMENT.exec(window.location.hash);
  if (!match) return null;
  const rest = window.location.hash.replace(FRAGMENT, '').replace(/^#?&/, '#');
  history.replaceState(
    history.state,
    '',
    `${window.location.pathname}${window.location.search}${rest === '#' ? '' : rest}`,
  );
  return match[1]!;
}

function stored(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null; // storage disabled: the proof lives in memory for this page only
  }
}

function store(proof: string | null): void {
  try {
    if (proof === null) sessionStorage.removeItem(STORAGE_KEY);
    else sessionStorage.setItem(STORAGE_KEY, proof);
  } catch {
    // Storage disabled: a reload will need a login link or another open tab.
  }
}

function openChannel(): BroadcastChannel | null {
  return typeof BroadcastChannel === 'function' ? new BroadcastChannel(CHANNEL) : null;
}

function askOtherTabs(channel: BroadcastChannel | null, timeoutMs: number): Promise<string | null> {
  if (channel === null) return Promise.resolve(null);
  const nonce = crypto.randomUUID();
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(null), timeoutMs);
    const onMessage = (event: MessageEvent<Message>) => {
      const message = event.data;
      if (message.kind === 'tell' && message.nonce === nonce) finish(message.proof);
    };
    function finish(proof: string | null): void {
      clearTimeout(timer);
      channel!.removeEventListener('message', onMessage);
      resolve(proof);
    }
    channel.addEventListener('message', onMessage);
    channel.postMessage({ kind: 'ask', nonce } satisfies Message);
  });
}

/**
 * This tab's session: from the login redirect's fragment, else this tab's storage (a reload),
 * else another open tab of this origin. The proof is shared with tabs that ask later.
 */
export async function claimTabSession(timeoutMs = ASK_TIMEOUT_MS): Promise<TabSession> {
  const channel = openChannel();
  let proof = proofFromFragment() ?? stored() ?? (await askOtherTabs(channel, timeoutMs));
  store(proof);
  const signedOutListeners = new Set<() => void>();
  channel?.addEventListener('message', (event: MessageEvent<Message>) => {
    const message = event.data;
    if (message.kind === 'ask' && proof !== null) {
      channel.postMessage({ kind: 'tell', nonce: message.nonce, proof } satisfies Message);
    } else if (message.kind === 'signed-out') {
      proof = null;
      store(null);
      for (const listener of signedOutListeners) listener();
    }
  });
  return {
    proof: () => proof,
    async refresh() {
      const answer = await askOtherTabs(channel, timeoutMs);
      if (answer !== null) {
        proof = answer;
        store(proof);
      }
      return answer;
    },
    signOut() {
      proof = null;
      store(null);
      channel?.postMessage({ kind: 'signed-out' } satisfies Message);
    },
    onSignedOut(listener) {
      signedOutListeners.add(listener);
      return () => signedOutListeners.delete(listener);
    },
  };
}
