import { describe, expect, it } from 'vitest';
import { MetadataError, metadataString, parseMetadata } from './metadata.ts';

describe('parseMetadata', () => {
  it('merges key=value and JSON objects left to right', () => {
    expect(
      parseMetadata(['name=First', '{"name":"Relay bot","future":true}', 'description=from Simple']),
    ).toEqual({ name: 'Relay bot', future: true, description: 'from Simple' });
  });
  it('keeps = signs inside values', () => {
    expect(parseMetadata(['description=a=b'])).toEqual({ description: 'a=b' });
  });
  it('refuses a bare word, naming the argument', () => {
    expect(() => parseMetadata(['x=1', 'oops'])).toThrow(/--metadata #2 is "oops": expected key=value/);
  });
  it('refuses broken JSON and non-object JSON', () => {
    expect(() => parseMetadata(['{"name":'])).toThrow(MetadataError);
    expect(() => parseMetadata(['[1]'])).toThrow(/key=value/);
  });
  it('reads strings only', () => {
    const m = parseMetadata(['{"name":3,"description":""}']);
    expect(metadataString(m, 'name')).toBeUndefined();
    expect(metadataString(m, 'description')).toBeUndefined();
  });
});

describe('parseMetadata keys', () => {
  it('keeps __proto__ as a plain key, never a prototype', () => {
    const m = parseMetadata(['{"__proto__":{"name":"Evil"}}', '__proto__=x']);
    expect(Object.getPrototypeOf(m)).toBe(Object.prototype);
    expect(metadataString(m, 'name')).toBeUndefined();
    expect(Object.hasOwn(m, '__proto__')).toBe(true);
  });
  it('refuses an empty key', () => {
    expect(() => parseMetadata([' =x'])).toThrow(/expected key=value/);
  });
  it('does not read inherited keys', () => {
    expect(metadataString(parseMetadata([]), 'toString')).toBeUndefined();
  });
});
