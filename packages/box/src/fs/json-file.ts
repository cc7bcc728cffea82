/** Small JSON files the box keeps in the data dir (the session book, the image hosts). */
import fsp from 'node:fs/promises';
import type { z } from 'zod';

/**
 * The file's content as `schema` reads it; null when it does not exist. Anything else that is
 * not what the schema expects (bad JSON included) throws `${file} ${whatIsWrong}`.
 */
export async function readJsonFile<T>(
  file: string,
  schema: z.ZodType<T>,
  whatIsWrong: string,
): Promise<T | null> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new Error(`${file} ${whatIsWrong}`);
  return parsed.data;
}
