/** Entry point of the `sendbox` bin (packages/box/bin/sendbox.mjs). */
import pc from 'picocolors';
import { processTerminal, sendboxProgram } from './program.ts';
import { openBoxHost } from './open-host.ts';

try {
  await sendboxProgram(openBoxHost).parseAsync(process.argv);
} catch (error) {
  processTerminal.err(pc.red(`sendbox: ${error instanceof Error ? error.message : String(error)}`));
  process.exitCode = 1;
}
