/**
 * The files backend's transcript: one JSONL file, appended through a file descriptor. An append that
 * fails part-way (a full disk) is cut back with `ftruncate`, so no torn line stays behind. The file's
 * inode and size after this log's own appends tell whether another writer changed it.
 */
import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { isNotFound } from '../../sandbox/paths.ts';
import type { TranscriptLog } from '../transcript.ts';
import { fileMark } from './file-mark.ts';

/** The file as this log last knew it: its inode (null: it did not exist) and size in bytes. */
interface JsonlMark {
  ino: number | null;
  size: number;
}

export class JsonlFile implements TranscriptLog {
  private fd: number | null = null;
  /** What the file is if only this log appended since it was read; null once another writer was seen. */
  private mark: JsonlMark | null = null;

  constructor(
    readonly source: string,
    /** Make the file's folder (private) at the first append, not before: a subagent's (agent-stores.ts). */
    private readonly options: { makeFolder?: boolean } = {},
  ) {}

  append(text: string): void {
    const bytes = Buffer.from(text, 'utf8');
    let fd: number | null = null;
    let start = 0;
    let offset = 0;
    try {
      fd = this.open();
      start = fstatSync(fd).size;
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      // Truncating frees space, so cutting back works on a full disk.
      if (fd !== null && offset > 0) ftruncateSync(fd, start);
      throw error;
    }
    if (this.mark) this.mark.size += bytes.length;
  }

  async read(): Promise<string> {
    this.close(); // the next append reopens the file it finds
    let bytes: Buffer;
    try {
      // One handle for the size and the bytes, so the mark describes exactly what was read.
      const handle = await open(this.source, 'r');
      try {
        const info = await handle.stat();
        bytes = await handle.readFile();
        this.mark = { ino: info.ino, size: bytes.length };
      } finally {
        await handle.close();
      }
    } catch (error) {
      if (!isNotFound(error)) throw error;
      this.mark = { ino: null, size: 0 };
      return '';
    }
    return bytes.toString('utf8');
  }

  unchanged(): boolean {
    const expected = this.mark;
    if (expected === null) return false;
    const actual = fileMark(this.source);
    if (actual === null) return expected.size === 0;
    return actual.size === expected.size && (expected.ino === null || actual.ino === expected.ino);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  /**
   * Opens the JSONL for appending. If a crash left a last line without its newline, one is added
   * first, so the next record starts on its own line (the torn line stays and readers skip it, C17).
   */
  private open(): number {
    if (this.fd !== null) return this.fd;
    if (this.options.makeFolder) mkdirSync(path.dirname(this.source), { recursive: true, mode: 0o700 });
    const fd = openSync(this.source, 'a+', 0o600);
    const info = fstatSync(fd);
    const size = info.size;
    const mark = this.mark;
    this.mark =
      mark && size === mark.size && (mark.ino === null || mark.ino === info.ino)
        ? { ino: info.ino, size }
        : null;
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) {
        writeSync(fd, '\n');
        if (this.mark) this.mark.size += 1;
      }
    }
    this.fd = fd;
    return fd;
  }
}
