/** How an outbound request of the box fails: a value the caller reports, never an uncaught exception. */

export type OutboundFailure =
  | 'bad-url'
  | 'refused'
  | 'unresolved'
  | 'unreachable'
  | 'timeout'
  | 'too-large'
  | 'too-many-redirects'
  | 'aborted';

/** Why an outbound request failed: what (`failure`), which host, and why (`message`, said for a person). */
export class OutboundError extends Error {
  override readonly name = 'OutboundError';

  constructor(
    readonly failure: OutboundFailure,
    readonly host: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The first OutboundError in an error's `cause` chain (undici and Node wrap what a lookup or stream raised). */
export function findOutboundError(error: unknown): OutboundError | undefined {
  for (let at = error, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth++) {
    if (at instanceof OutboundError) return at;
  }
  return undefined;
}
