import { describe, expect, it } from 'vitest';
import { scrubberFor } from '../secrets/scrub.ts';
import { TOOL_OUTPUT_CAP, toolCallDetails } from './tool-details.ts';

describe('toolCallDetails', () => {
  const scrubber = scrubberFor(new Map([['TOKEN', 'sk-very-secret-value']]));

  it("keeps the model's description, the input and output scrubbed, and the duration", () => {
    const details = toolCallDetails(
      { command: 'curl -H "sk-very-secret-value" x', description: 'Fetch the page' },
      { success: { output: 'got sk-very-secret-value' } },
      1234.4,
      scrubber,
    );
    expect(details.description).toBe('Fetch the page');
    expect(details.input).toContain('curl');
    expect(details.input + details.output).not.toContain('sk-very-secret-value');
    expect(details.durationMs).toBe(1234);
    expect(details.output).toMatch(/^success\noutput: got \[secret TOKEN redacted\]$/);
    const lines = toolCallDetails({}, { failure: { stdout: 'a\nb\n', exitCode: 1 } }, 1, scrubber).output;
    expect(lines).toBe('failure\nstdout:\na\nb\nexitCode: 1');
  });

  it("shows a shell result as its stdout and stderr in plain text, not the envelope's JSON", () => {
    const failed = toolCallDetails(
      { command: 'make' },
      {
        failure: {
          command: 'make',
          exitCode: 2,
          executionTime: 26,
          localExecutionTimeMs: 26,
          stdout: 'building "app"\n',
          stderr: 'error: missing\nline 2\n',
          interleavedOutput: 'building "app"\nerror: missing\nline 2\n',
          workingDirectory: '/workspace',
        },
        isBackground: false,
      },
      26,
      scrubber,
    ).output;
    expect(failed).toBe(
      [
        'failure',
        'command: make',
        'exitCode: 2',
        'executionTime: 26',
        'stdout:',
        'building "app"',
        'stderr:',
        'error: missing',
        'line 2',
        'workingDirectory: /workspace',
      ].join('\n'),
    );
    const ok = toolCallDetails(
      { command: 'ls' },
      { success: { stdout: 'a\nb\n', exitCode: 0 }, isBackground: false },
      1,
      scrubber,
    ).output;
    expect(ok).toBe('success\nstdout:\na\nb\nexitCode: 0');
    const background = toolCallDetails(
      { command: 'serve', isBackground: true },
      { success: { taskId: 't1', stderr: '' }, isBackground: true },
      1,
      scrubber,
    ).output;
    expect(background).toBe('success\ntaskId: t1\nisBackground: true');
  });

  it('caps a huge output and says how much was left out', () => {
    const details = toolCallDetails(
      { command: 'cat big' },
      { success: { output: 'x'.repeat(50_000) } },
      1,
      scrubber,
    );
    expect(details.output.length).toBeLessThan(TOOL_OUTPUT_CAP + 100);
    expect(details.output).toMatch(/more characters\)$/);
    expect(details.description).toBeUndefined();
  });

  it("shows a read image's size, not its base64", () => {
    const details = toolCallDetails(
      { path: 'shot.png' },
      { success: { path: 'shot.png', mediaType: 'image/png', imageData: 'A'.repeat(4096) } },
      5,
      scrubber,
    );
    expect(details.output).toContain('imageData: (image, 3 KB, shown to the model)');
    expect(details.output).not.toContain('AAAA');
  });
});
