/**
 * `--object-store-url s3://bucket?endpoint=…&region=…` (issue 25): which bucket attachments and
 * sandbox snapshots go to. The credentials come from the AWS SDK's usual places (AWS_ACCESS_KEY_ID
 * and AWS_SECRET_ACCESS_KEY, a profile, an instance role), never from the URL: a URL is printed.
 */
export interface ObjectStoreLocation {
  bucket: string;
  /** An S3-compatible server (Ceph RGW, MinIO…); absent: AWS itself. */
  endpoint?: string;
  region: string;
}

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function parseObjectStoreUrl(text: string): ObjectStoreLocation {
  const fail = (what: string): never => {
    throw new Error(
      `object store URL ${JSON.stringify(text)}: ${what}; write it as s3://BUCKET?endpoint=https://host:port&region=REGION`,
    );
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail('not a URL');
  }
  if (url.protocol !== 's3:') fail(`the scheme is ${url.protocol.replace(/:$/, '')}, not s3`);
  if (url.username || url.password)
    fail('credentials do not belong in the URL (use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)');
  if (url.pathname !== '' && url.pathname !== '/') fail('a key prefix is not supported');
  const bucket = url.hostname;
  if (!BUCKET.test(bucket))
    fail(`${JSON.stringify(bucket)} is not a valid bucket name (3 to 63 of a-z 0-9 . -)`);
  for (const key of url.searchParams.keys()) {
    if (key !== 'endpoint' && key !== 'region')
      fail(`unknown parameter ${JSON.stringify(key)} (endpoint, region)`);
  }
  const endpoint = url.searchParams.get('endpoint') ?? undefined;
  if (endpoint !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(endpoint);
    } catch {
      // reported below
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      fail(`endpoint ${JSON.stringify(endpoint)} is not an http(s) URL`);
    }
  }
  return { bucket, region: url.searchParams.get('region') ?? 'us-east-1', ...(endpoint ? { endpoint } : {}) };
}
