/**
 * The protobuf wire format (https://protobuf.dev/programming-guides/encoding/),
 * for the harnesses that keep conversation state in protobuf blobs without a
 * published schema (Cursor's turn graph, Antigravity's steps): fields are
 * read by number, and written in the order they are given.
 *
 * Reading is tolerant: a truncated or corrupt message yields the fields
 * before the damage, never an error, so a bad blob shortens a view instead
 * of ending it. Varints are read as numbers: exact up to 2^53, which every
 * count, enum and millisecond time in these formats is below.
 */

export type PbValue =
  | { wire: 'varint'; value: number }
  | { wire: 'bytes'; value: Uint8Array }
  | { wire: 'fixed32'; value: Uint8Array }
  | { wire: 'fixed64'; value: Uint8Array };

export interface PbField {
  field: number;
  value: PbValue;
}

/** A varint at `at`: its value and where the next byte is, or undefined when the buffer ends inside it. */
function readVarint(buf: Uint8Array, at: number): { value: number; next: number } | undefined {
  let value = 0;
  let scale = 1;
  for (let i = at; i < buf.length && i < at + 10; i++) {
    const byte = buf[i]!;
    value += (byte & 0x7f) * scale;
    if ((byte & 0x80) === 0) return { value, next: i + 1 };
    scale *= 128;
  }
  return undefined;
}

/**
 * The fields of one message, in wire order, and whether every byte was read:
 * reading stops at the first damaged byte (`whole` false).
 */
export function pbRead(buf: Uint8Array): { fields: PbField[]; whole: boolean } {
  const out: PbField[] = [];
  const damaged = { fields: out, whole: false };
  let i = 0;
  while (i < buf.length) {
    const tag = readVarint(buf, i);
    if (tag === undefined) return damaged;
    const field = Math.floor(tag.value / 8);
    if (field === 0) return damaged;
    let at = tag.next;
    let value: PbValue;
    switch (tag.value % 8) {
      case 0: {
        const v = readVarint(buf, at);
        if (v === undefined) return damaged;
        value = { wire: 'varint', value: v.value };
        at = v.next;
        break;
      }
      case 2: {
        const len = readVarint(buf, at);
        if (len === undefined || len.next + len.value > buf.length) return damaged;
        value = { wire: 'bytes', value: buf.subarray(len.next, len.next + len.value) };
        at = len.next + len.value;
        break;
      }
      case 5:
        if (at + 4 > buf.length) return damaged;
        value = { wire: 'fixed32', value: buf.subarray(at, at + 4) };
        at += 4;
        break;
      case 1:
        if (at + 8 > buf.length) return damaged;
        value = { wire: 'fixed64', value: buf.subarray(at, at + 8) };
        at += 8;
        break;
      default:
        return damaged; // groups (3, 4) are not used by these formats; anything else is damage
    }
    out.push({ field, value });
    i = at;
  }
  return { fields: out, whole: true };
}

/** The fields of one message, in wire order; reading stops at the first damaged byte. */
export function pbFields(buf: Uint8Array): PbField[] {
  return pbRead(buf).fields;
}

/** The bytes of the first length-delimited field `n`. */
export function pbBytes(fields: readonly PbField[], n: number): Uint8Array | undefined {
  for (const f of fields) if (f.field === n && f.value.wire === 'bytes') return f.value.value;
  return undefined;
}

/** The bytes of every length-delimited field `n`, in order (a repeated field). */
export function pbAllBytes(fields: readonly PbField[], n: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const f of fields) if (f.field === n && f.value.wire === 'bytes') out.push(f.value.value);
  return out;
}

/** The sub-message in field `n`, decoded (empty when absent). */
export function pbMessage(fields: readonly PbField[], n: number): PbField[] {
  const bytes = pbBytes(fields, n);
  return bytes === undefined ? [] : pbFields(bytes);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Field `n` as UTF-8 text; undefined when absent or not valid UTF-8. */
export function pbString(fields: readonly PbField[], n: number): string | undefined {
  const bytes = pbBytes(fields, n);
  if (bytes === undefined) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The first varint field `n`. */
export function pbUint(fields: readonly PbField[], n: number): number | undefined {
  for (const f of fields) if (f.field === n && f.value.wire === 'varint') return f.value.value;
  return undefined;
}

/** `google.protobuf.Timestamp {1: seconds, 2: nanos}` as RFC 3339 UTC (milliseconds). */
export function pbTimestamp(fields: readonly PbField[]): string | undefined {
  const seconds = pbUint(fields, 1);
  if (seconds === undefined) return undefined;
  const ms = seconds * 1000 + Math.floor((pbUint(fields, 2) ?? 0) / 1e6);
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** A message being written: fields in the order they are added. */
export class PbWriter {
  private readonly parts: Uint8Array[] = [];

  private pushVarint(value: number): void {
    const bytes: number[] = [];
    let v = Math.floor(value);
    while (v >= 0x80) {
      bytes.push((v % 128) | 0x80);
      v = Math.floor(v / 128);
    }
    bytes.push(v);
    this.parts.push(Uint8Array.from(bytes));
  }

  varint(field: number, value: number): this {
    if (!Number.isSafeInteger(value) || value < 0)
      throw new RangeError(`protobuf varint ${value} is not a count`);
    this.pushVarint(field * 8);
    this.pushVarint(value);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.pushVarint(field * 8 + 2);
    this.pushVarint(value.length);
    this.parts.push(value);
    return this;
  }

  /** A string field; an empty string is left out, as proto3 leaves out defaults. */
  string(field: number, value: string | undefined): this {
    if (value === undefined || value === '') return this;
    return this.bytes(field, Buffer.from(value, 'utf8'));
  }

  message(field: number, inner: PbWriter): this {
    return this.bytes(field, inner.finish());
  }

  /** A `google.protobuf.Timestamp` for an RFC 3339 time. */
  timestamp(field: number, iso: string): this {
    const ms = Date.parse(iso);
    const inner = new PbWriter();
    if (!Number.isNaN(ms) && ms > 0) {
      inner.varint(1, Math.floor(ms / 1000));
      if (ms % 1000 !== 0) inner.varint(2, (ms % 1000) * 1e6);
    }
    return this.message(field, inner);
  }

  finish(): Uint8Array {
    return Buffer.concat(this.parts);
  }
}
