import { describe, expect, it } from 'vitest';
import { DEFAULT_CURSOR_AGENT_URL, pageLinks } from './links.ts';

describe('pageLinks', () => {
  it('defaults the cursor-agent link and takes an https template from the environment', () => {
    expect(pageLinks({}).cursorAgent).toBe(DEFAULT_CURSOR_AGENT_URL);
    expect(pageLinks({ SENDBOX_CURSOR_AGENT_URL: 'https://example.test/a/{bcId}' }).cursorAgent).toBe(
      'https://example.test/a/{bcId}',
    );
  });
  it('refuses a template without {bcId} or with a scheme other than https', () => {
    expect(() => pageLinks({ SENDBOX_CURSOR_AGENT_URL: 'https://example.test/' })).toThrow(/\{bcId\}/);
    expect(() => pageLinks({ SENDBOX_CURSOR_AGENT_URL: 'javascript:alert({bcId})' })).toThrow(/https/);
    expect(() => pageLinks({ SENDBOX_CURSOR_AGENT_URL: 'http://example.test/{bcId}' })).toThrow(/https/);
  });
});
