/**
 * The token estimate's calibration per model (context/tokens.ts), kept in the data dir
 * (`context-calibration.json`, 0600, replaced atomically) so a restarted box estimates as the box
 * before it did: the window decisions of its first calls (prune, summarise) are the ones the live
 * box would have made. A model whose tokenizer is exact never gets an entry.
 */
import path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../fs/atomic.ts';
import { readJsonFile } from '../fs/json-file.ts';

const fileSchema = z.object({
  version: z.literal(1),
  models: z.record(z.string(), z.object({ factor: z.number().positive(), updatedAt: z.number() })),
});

type CalibrationFile = z.infer<typeof fileSchema>;

/** A factor that moved less than this since it was saved is not written again. */
const SAVE_STEP = 0.01;

export class CalibrationBook {
  readonly file: string;
  private loaded: Promise<CalibrationFile> | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    dataDir: string,
    private readonly now: () => number = Date.now,
  ) {
    this.file = path.join(dataDir, 'context-calibration.json');
  }

  /** The saved factor of `model`, or undefined. */
  async factor(model: string): Promise<number | undefined> {
    return (await this.load()).models[model]?.factor;
  }

  /** Keeps `factor` for `model` (written when it moved by at least 1 %); never throws. */
  save(model: string, factor: number): Promise<void> {
    this.writing = this.writing.then(async () => {
      const data = await this.load();
      const saved = data.models[model]?.factor;
      if (saved !== undefined && Math.abs(saved - factor) < SAVE_STEP * saved) return;
      data.models[model] = { factor, updatedAt: this.now() };
      await writeFileAtomic(this.file, `${JSON.stringify(data, null, 2)}\n`).catch(() => {
        // A full disk loses a calibration, never a turn: the estimate stays conservative.
      });
    });
    return this.writing;
  }

  /** Settles once every save asked for so far is on disk (the host waits for it as it closes). */
  settled(): Promise<void> {
    return this.writing;
  }

  private load(): Promise<CalibrationFile> {
    this.loaded ??= readJsonFile(
      this.file,
      fileSchema,
      'is not a calibration file sendbox wrote; delete it to start the estimates again',
    ).then(
      (data) => data ?? { version: 1 as const, models: {} },
      // An unreadable file is started again (it is only an estimate), not a box that will not start.
      () => ({ version: 1 as const, models: {} }),
    );
    return this.loaded;
  }
}
