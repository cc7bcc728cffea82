/**
 * A background command's output file in the agent's sandbox
 * (`.tasks/<taskId>.log`): stdout and stderr interleaved as they arrive, up to
 * a cap, then one line saying the rest was dropped. The host creates the file
 * (O_EXCL, no link followed: sandbox/paths.ts) and writes it through its own
 * descriptor, so renaming or deleting the file from inside the sandbox cannot
 * send the host's writes elsewhere; reads for `await` use the same descriptor.
 *
 * The file holds the raw output, like any file the command could write
 * itself; what leaves the box (`await`, events) is scrubbed by the reader.
 */
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { createOpenInSandbox, openInSandbox } from '../sandbox/paths.ts';

/** Bytes of output kept in a task's file (10 MiB). */
export const TASK_OUTPUT_CAP_BYTES = 10 * 1024 * 1024;

/** The folder of the output files, relative to the sandbox. */
export const TASK_OUTPUT_FOLDER = '.tasks';

/**
 * The last `bytes` of an output file a task of an earlier run wrote (after a restart the host has no
 * descriptor): opened as any sandbox file is, no link followed (the sandbox may have replaced it).
 * Raw: the caller scrubs. Empty when the file is gone or not a regular file.
 */
export async function readOutputTail(sandboxDir: string, filePath: string, bytes: number): Promise<Buffer> {
  try {
    const opened = await openInSandbox(sandboxDir, path.relative(sandboxDir, filePath));
    try {
      const from = Math.max(0, opened.info.size - bytes);
      const buffer = Buffer.alloc(opened.info.size - from);
      const { bytesRead } = await opened.handle.read(buffer, 0, buffer.length, from);
      return buffer.subarray(0, bytesRead);
    } finally {
      await opened.handle.close();
    }
  } catch {
    return Buffer.alloc(0);
  }
}

export class TaskOutput {
  /** Bytes the command produced (kept or not). */
  private produced = 0;
  /** Bytes in the file. */
  private written = 0;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;
  private failure: Error | null = null;
  private readonly listeners = new Set<(chunk: Buffer) => void>();

  private constructor(
    private readonly handle: FileHandle,
    /** The file's absolute path (as the agent's commands see it: the sandbox is bound at its host path). */
    readonly path: string,
    private readonly cap: number,
  ) {}

  static async create(sandboxDir: string, taskId: string, cap = TASK_OUTPUT_CAP_BYTES): Promise<TaskOutput> {
    const opened = await createOpenInSandbox(sandboxDir, path.join(TASK_OUTPUT_FOLDER, `${taskId}.log`));
    return new TaskOutput(opened.handle, opened.path, cap);
  }

  /** Bytes the command has produced so far. */
  get length(): number {
    return this.produced;
  }

  /** Bytes of the output the file holds (the rest was past the cap). */
  get kept(): number {
    return this.written;
  }

  get truncated(): boolean {
    return this.produced > this.cap;
  }

  /** Told every chunk as it arrives, before it is in the file. */
  onChunk(listener: (chunk: Buffer) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  add(chunk: Buffer): void {
    if (this.closed) return;
    const before = this.produced;
    this.produced += chunk.length;
    for (const listener of this.listeners) listener(chunk);
    const room = this.cap - before;
    if (room > 0) {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.queue(part);
      if (part.length < chunk.length) {
        this.queue(Buffer.from(`\n[output cut at ${this.cap} bytes: the rest of it was not kept]\n`));
      }
    }
  }

  /** Resolves when every chunk added so far is in the file. */
  flushed(): Promise<void> {
    return this.writing;
  }

  /**
   * The file's bytes in [from, to) (to is capped at what the file holds), read through the host's
   * own descriptor after pending writes.
   */
  async read(from: number, to: number): Promise<Buffer> {
    await this.writing;
    const end = Math.min(to, this.written);
    if (this.failure || end <= from) return Buffer.alloc(0);
    const buffer = Buffer.alloc(end - from);
    const { bytesRead } = await this.handle.read(buffer, 0, buffer.length, from);
    return buffer.subarray(0, bytesRead);
  }

  /** The first error writing the file hit (a full disk): the output after it is not kept. */
  get error(): Error | null {
    return this.failure;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    await this.writing;
    await this.handle.close().catch(() => undefined);
  }

  private queue(bytes: Buffer): void {
    const at = this.written;
    this.written += bytes.length;
    this.writing = this.writing.then(async () => {
      if (this.failure) return;
      try {
        await this.handle.write(bytes, 0, bytes.length, at);
      } catch (error) {
        this.failure = error as Error;
      }
    });
  }
}
