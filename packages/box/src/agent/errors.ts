/** Errors an agent raises for bad requests; the gateway maps `status` onto HTTP. */
export class HostError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 403 | 404 | 409 | 413 | 423 | 502 | 507,
  ) {
    super(message);
    this.name = 'HostError';
  }
}
