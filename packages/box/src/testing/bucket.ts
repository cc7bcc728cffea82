/**
 * Tests and benchmarks on the shared Ceph RGW (one memstore OSD of 512 MiB for everyone): what a test
 * put under its agent's prefix is removed after it, so the store does not fill up run after run.
 */
import { DeleteObjectsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

/** Removes every object whose key starts with `prefix`; how many it removed. */
export async function removeObjects(s3: S3Client, bucket: string, prefix: string): Promise<number> {
  let removed = 0;
  for (;;) {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    const keys = (page.Contents ?? []).flatMap((object) => (object.Key ? [{ Key: object.Key }] : []));
    if (keys.length === 0) return removed;
    await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }));
    removed += keys.length;
  }
}
