/**
 * `<data-dir>/gateway.json`: how clients (the txcript CLI, Grok Bot tools) find
 * the running gateway (grok-bot-format.md §8). Written atomically with mode
 * 0600 once the port is bound; removed on clean shutdown, but only while it
 * still describes this gateway, so a newer gateway's descriptor survives.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ensurePrivateDir, writeFileAtomic } from '../fs/atomic.ts';

export const gatewayDescriptorSchema = z.object({
  host: z.string(),
  port: z.number().int().min(1).max(65535),
  token: z.string().min(1),
});

export type GatewayDescriptor = z.infer<typeof gatewayDescriptorSchema>;

export function descriptorPath(dataDir: string): string {
  return path.join(dataDir, 'gateway.json');
}

export async function writeGatewayDescriptor(
  dataDir: string,
  descriptor: GatewayDescriptor,
): Promise<string> {
  await ensurePrivateDir(dataDir);
  const file = descriptorPath(dataDir);
  await writeFileAtomic(file, `${JSON.stringify(descriptor, null, 2)}\n`, { mode: 0o600 });
  return file;
}

export async function readGatewayDescriptor(dataDir: string): Promise<GatewayDescriptor | null> {
  let text: string;
  try {
    text = await fsp.readFile(descriptorPath(dataDir), 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed = gatewayDescriptorSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Removes the descriptor if it still holds `token`; true when it did. */
export async function removeGatewayDescriptor(dataDir: string, token: string): Promise<boolean> {
  const current = await readGatewayDescriptor(dataDir);
  if (current?.token !== token) return false;
  await fsp.rm(descriptorPath(dataDir), { force: true });
  return true;
}
