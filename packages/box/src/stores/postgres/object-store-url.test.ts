import { describe, expect, it } from 'vitest';
import { parseObjectStoreUrl } from './object-store-url.ts';

describe('parseObjectStoreUrl', () => {
  it('reads the bucket, the endpoint and the region', () => {
    expect(
      parseObjectStoreUrl('s3://box-files?endpoint=http%3A%2F%2F127.0.0.1%3A7480&region=eu-west-1'),
    ).toEqual({ bucket: 'box-files', endpoint: 'http://127.0.0.1:7480', region: 'eu-west-1' });
    expect(parseObjectStoreUrl('s3://box-files')).toEqual({ bucket: 'box-files', region: 'us-east-1' });
  });

  it('refuses what it cannot use, saying how to write it', () => {
    expect(() => parseObjectStoreUrl('http://box-files')).toThrow(
      /scheme is http, not s3; write it as s3:\/\//,
    );
    expect(() => parseObjectStoreUrl('s3://key:secret@box-files')).toThrow(/AWS_ACCESS_KEY_ID/);
    expect(() => parseObjectStoreUrl('s3://ab')).toThrow(/not a valid bucket name/);
    expect(() => parseObjectStoreUrl('s3://box-files/prefix')).toThrow(/key prefix/);
    expect(() => parseObjectStoreUrl('s3://box-files?endpont=x')).toThrow(/unknown parameter "endpont"/);
    expect(() => parseObjectStoreUrl('s3://box-files?endpoint=ftp://x')).toThrow(/not an http\(s\) URL/);
  });
});
