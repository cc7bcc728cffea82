/**
 * Containment of model-supplied paths in an agent's sandbox folder. A path is
 * resolved against the sandbox, symlinks are followed (realpath), and the
 * result must still lie inside the sandbox's own real path; `..` segments and
 * links that point out are refused with a message the model can act on.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';

export class OutsideSandboxError extends Error {
  constructor(
    readonly requested: string,
    readonly sandboxDir: string,
    detail: string,
  ) {
    super(
      `The path ${JSON.stringify(requested)} ${detail}. Only files inside your sandbox folder ` +
        `${sandboxDir} can be used: write or copy the file there and use a path relative to it.`,
    );
    this.name = 'OutsideSandboxError';
  }
}

export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Resolves `requested` (absolute or relative to the sandbox) to a real path
 * inside the sandbox. With `mustExist: false` the deepest existing ancestor
 * is realpath'd instead, so a file about to be written cannot escape through
 * a symlinked parent folder.
 */
export async function resolveInSandbox(
  sandboxDir: string,
  requested: string,
  options: { mustExist: boolean },
): Promise<string> {
  const root = await realpath(sandboxDir);
  const absolute = path.resolve(root, requested);
  if (!isInside(root, absolute) && !isInside(path.resolve(sandboxDir), absolute)) {
    throw new OutsideSandboxError(requested, sandboxDir, 'is outside your sandbox folder');
  }
  let real: string;
  try {
    real = await realpath(absolute);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    if (options.mustExist) {
      throw new Error(`No file at ${JSON.stringify(requested)} in your sandbox folder ${sandboxDir}.`, {
        cause: error,
      });
    }
    real = await realpathOfNearestAncestor(absolute);
  }
  if (!isInside(root, real)) {
    throw new OutsideSandboxError(requested, sandboxDir, `resolves (through a symlink) to ${real}, outside`);
  }
  return real;
}

async function realpathOfNearestAncestor(absolute: string): Promise<string> {
  const tail: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      return path.join(await realpath(current), ...tail.reverse());
    } catch (error) {
      if (!isNotFound(error)) throw error;
      const parent = path.dirname(current);
      if (parent === current) throw error;
      tail.push(path.basename(current));
      current = parent;
    }
  }
}

export function isNotFound(error: unknown): boolean {
  return error instanceof Error && 'code' in error && (error as NodeJS.ErrnoException).code === 'ENOENT';
}
