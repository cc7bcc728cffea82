import { createHash } from 'node:crypto';

function parseUuid(uuid: string): Buffer {
  const hex = uuid.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error(`not a UUID: ${uuid}`);
  return Buffer.from(hex, 'hex');
}

/** Namespaces parsed so far: a codec names a few, and asks for ids in one of them per line. */
const namespaces = new Map<string, Buffer>();

function namespaceBytes(namespace: string): Buffer {
  let bytes = namespaces.get(namespace);
  if (bytes === undefined) namespaces.set(namespace, (bytes = parseUuid(namespace)));
  return bytes;
}

/** RFC 9562 UUIDv5 (SHA-1, name-based): deterministic ids for synthetic tool calls. */
export function uuidV5(namespace: string, name: string): string {
  const hash = createHash('sha1').update(namespaceBytes(namespace)).update(name, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const h = hash.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
