/**
 * The `txcript` command line: commander wiring, and the mapping of every
 * failure to one stderr line and an exit code (0 ok, 1 runtime, 2 usage).
 * Command modules are imported when their command runs, so `--help` and
 * small commands start fast.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from '@commander-js/extra-typings';
import type { OutputConfiguration } from '@commander-js/extra-typings';
import { type CliContext, type CliIo, createContext } from './context.ts';
import { CliError, EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, formatError, oneLine } from './errors.ts';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError('expected a whole number of at least 1');
  return n;
}

const RANGE_HELP = `
Session ids: an exact id, an exact title, or an unambiguous id prefix.
Ranges (1-based, the #N numbers view prints):
  <id>#7      message 7
  <id>#5-12   messages 5 to 12
  <id>#5-     message 5 to the end
  <id>#-10    the last 10 messages
A range that would separate a tool call from its result is refused.`;

const SEARCH_HELP = `
Query syntax (case-insensitive, matches inside words):
  deploy staging     both words, in the same message
  "exact phrase"     the words together, in this order
  -staging           hits without it (quote a phrase to exclude it: -"dry run")
  paginaton~         up to one typo from 6 letters, two from 9
A hit's reference (id#N, or id#N-M to keep a tool call with its result) works
with view, export and continue.`;

/**
 * Where commander writes, and its own usage errors in our one-line shape,
 * pointing at the help of the command that was mistyped.
 */
function outputFor(io: CliIo, command: string): OutputConfiguration {
  return {
    writeOut: (s) => void io.stdout.write(s),
    writeErr: (s) => void io.stderr.write(s),
    outputError: (s, write) => {
      const [first, ...rest] = s.trim().split('\n');
      const what = (first ?? '').replace(/^error:\s*/, '');
      const hint = rest
        .map((r) => r.trim())
        .filter((r) => r !== '')
        .join(' ');
      write(formatError({ what: hint === '' ? what : `${what} ${hint}`, todo: `see "${command} --help"` }));
    },
  };
}

/** The version in txcript's package.json (the bundle sits at src/cli's depth, so the path holds for both). */
function txcriptVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return manifest.version ?? '0.0.0';
}

/** `setExitCode` lets a command end with a code of its own (continue: the resumed tool's). */
/** `afterDoubleDash`: the command line has a `--`, after which every argument is text, not an option. */
function buildProgram(
  ctx: CliContext,
  setExitCode: (code: number) => void,
  afterDoubleDash: boolean,
): Command {
  const { io } = ctx;
  const program = new Command()
    .name('txcript')
    .description('List, view, export and convert agent transcripts across harnesses.')
    .version(txcriptVersion(), '-V, --version', 'print the version of txcript')
    .option('-q, --quiet', 'print no warnings about unreadable files and records')
    .showSuggestionAfterError()
    .configureOutput(outputFor(io, 'txcript'))
    .exitOverride()
    .hook('preAction', (root) => {
      ctx.quiet = root.opts().quiet === true;
    });

  program
    .command('list')
    .configureOutput(outputFor(io, 'txcript list'))
    .description('list sessions, newest first; subagents are shown under their parent')
    .option('--from <harness>', 'only this harness (e.g. grok_bot)')
    .option(
      '--json',
      'print a JSON array (fields: id, harness, title, messages, last_activity, parent, locator)',
    )
    .addOption(new Option('-n, --limit <n>', 'at most N sessions').argParser(positiveInt))
    .option('--since <time>', 'only sessions active at or after: RFC 3339, YYYY-MM-DD, or an age like 2h, 3d')
    .option(
      '--until <time>',
      'only sessions active at or before: RFC 3339, YYYY-MM-DD, or an age like 2h, 3d',
    )
    .option('--no-cache', 'read every session source; neither use nor update the summary cache')
    .action(async (options) => {
      const { listCommand } = await import('./list.ts');
      await listCommand(ctx, options);
    });

  program
    .command('view')
    .configureOutput(outputFor(io, 'txcript view'))
    .description('print a session as compact, readable text')
    .argument('<session>', 'session id, title or id prefix, optionally with #range')
    .option('--from <harness>', 'look the session up in this harness only')
    .addHelpText('after', RANGE_HELP)
    .action(async (target, options) => {
      const { viewCommand } = await import('./show.ts');
      await viewCommand(ctx, target, options);
    });

  program
    .command('export')
    .configureOutput(outputFor(io, 'txcript export'))
    .description('write a session (or a range of it) as a Simple document')
    .argument('<session>', 'session id, title or id prefix, optionally with #range')
    .option('--from <harness>', 'look the session up in this harness only')
    .option('--out <file>', 'write to this file (atomically) instead of stdout')
    .addHelpText('after', RANGE_HELP)
    .action(async (target, options) => {
      const { exportCommand } = await import('./show.ts');
      await exportCommand(ctx, target, options);
    });

  program
    .command('convert')
    .configureOutput(outputFor(io, 'txcript convert'))
    .description("convert one harness's native session text into another's")
    .argument('<file>', 'the input file, or - for stdin')
    .requiredOption('--from <harness>', 'the harness the input is written in (e.g. simple, grok_bot)')
    .requiredOption('--to <harness>', 'the harness to write')
    .addHelpText('after', '\nThe result goes to stdout; warnings about the input go to stderr.')
    .action(async (input, options) => {
      const { convertCommand } = await import('./convert.ts');
      await convertCommand(ctx, input, options);
    });

  program
    .command('continue')
    .configureOutput(outputFor(io, 'txcript continue'))
    .description('continue a session as a new one in a harness (Grok Bot agent, Claude Code, Codex, pi, …)')
    .argument('<session>', 'session id, title or id prefix, a file, or - for stdin; optionally with #range')
    .option(
      '--with <harness>',
      'where to continue: grok_bot, claude_code, codex, pi, campfire, grok or opencode (default: where it came from)',
    )
    .option(
      '--from <harness>',
      "the harness to find the session in, or a file's text format (default simple)",
    )
    .option(
      '--out <dir>',
      "write into DIR, laid out as the harness's store, instead of the live store; no launch",
    )
    .option('--no-resume', 'save the session but do not open it (always so for grok_bot)')
    .addOption(
      new Option('--metadata <entry>', 'key=value or a JSON object; repeatable, merged left to right')
        .argParser((value: string, previous: string[]) => [...previous, value])
        .default([] as string[]),
    )
    .addHelpText('after', RANGE_HELP)
    .action(async (source, options) => {
      const { continueCommand } = await import('./continue.ts');
      setExitCode(await continueCommand(ctx, source, options));
    });

  program
    .command('search')
    .configureOutput(outputFor(io, 'txcript search'))
    .description('search every session: ranked hits with the matching text and a reference for view')
    .argument('[query...]', 'words (all must match), "an exact phrase", -exclude, typo~')
    .option('--from <harness>', 'only this harness (e.g. claude_code)')
    .option('--since <time>', 'only sessions active at or after: RFC 3339, YYYY-MM-DD, or an age like 2h, 3d')
    .option(
      '--until <time>',
      'only sessions active at or before: RFC 3339, YYYY-MM-DD, or an age like 2h, 3d',
    )
    .option('--cwd <dir>', 'only sessions whose working folder is DIR or under it')
    .addOption(new Option('-n, --limit <n>', 'at most N hits (default 20)').argParser(positiveInt))
    .option(
      '--json',
      'print a JSON array (fields: ref, id, harness, message, kind, title, snippet, highlights, …)',
    )
    .option('--no-index', 'scan every session now; neither use nor update the search index')
    // `-word` excludes a word: unknown single-dash options are query terms (search.ts refuses `--x`).
    .allowUnknownOption()
    .addHelpText('after', SEARCH_HELP)
    .action(async (words, options) => {
      const { searchCommand } = await import('./search.ts');
      setExitCode(await searchCommand(ctx, words, { ...options, literal: afterDoubleDash }));
    });

  program
    .command('index')
    .configureOutput(outputFor(io, 'txcript index'))
    .description('bring the search index up to date now (a first search starts this in the background)')
    .option('--from <harness>', 'only this harness (e.g. claude_code)')
    .action(async (options) => {
      const { indexCommand } = await import('./index-command.ts');
      setExitCode(await indexCommand(ctx, options));
    });

  program
    .command('pick')
    .configureOutput(outputFor(io, 'txcript pick'))
    .description('pick a session interactively (type to search, arrows, Enter continues it, Esc cancels)')
    .option('--from <harness>', 'only this harness (e.g. claude_code)')
    .option('--with <harness>', 'continue the pick in this harness (default: where it came from)')
    .option('--since <time>', 'only sessions active at or after: RFC 3339, YYYY-MM-DD, or an age like 2h, 3d')
    .option(
      '--until <time>',
      'only sessions active at or before: RFC 3339, YYYY-MM-DD, or an age like 2h, 3d',
    )
    .option('--cwd <dir>', 'only sessions whose working folder is DIR or under it')
    .addOption(
      new Option('-n, --limit <n>', 'at most N entries in the list (default 50)').argParser(positiveInt),
    )
    .option('--no-index', 'scan every session now; neither use nor update the search index')
    .addHelpText('after', SEARCH_HELP)
    .action(async (options) => {
      const { pickCommand } = await import('./pick.ts');
      setExitCode(await pickCommand(ctx, options));
    });

  program
    .command('mcp')
    .configureOutput(outputFor(io, 'txcript mcp'))
    .description('serve list_sessions, search_sessions and read_session to agents over MCP (stdio)')
    .addHelpText(
      'after',
      '\nStdout carries the protocol; warnings go to stderr. See docs/mcp.md to add it to an agent.',
    )
    .action(async () => {
      const { serveMcp } = await import('../mcp/server.ts');
      await serveMcp(ctx);
    });

  program
    .command('completion')
    .configureOutput(outputFor(io, 'txcript completion'))
    .description('print a shell completion script: bash, zsh or fish')
    .argument('<shell>', 'bash, zsh or fish')
    .addHelpText(
      'after',
      `
Install:
  bash  echo 'source <(txcript completion bash)' >> ~/.bashrc
  zsh   echo 'source <(txcript completion zsh)' >> ~/.zshrc
  fish  txcript completion fish > ~/.config/fish/completions/txcript.fish`,
    )
    .action(async (shell) => {
      const { completionScript, describeCommands } = await import('./completion.ts');
      const harnesses = (await ctx.harnesses()).map((h) => h.id);
      io.stdout.write(completionScript(shell, describeCommands(program), harnesses));
    });

  return program;
}

/** Commander's codes for a command line that cannot work as written. */
const USAGE_CODES = new Set([
  'commander.unknownOption',
  'commander.unknownCommand',
  'commander.missingArgument',
  'commander.missingMandatoryOptionValue',
  'commander.optionMissingArgument',
  'commander.invalidArgument',
  'commander.excessArguments',
  'commander.conflictingOption',
]);

/** Run `txcript` with `argv` (arguments after the program name); resolves to the exit code. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode: number = EXIT_OK;
  const ctx = createContext(io);
  const program = buildProgram(ctx, (code) => (exitCode = code), argv.includes('--'));
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT_OK;
      // `txcript` alone prints the help to stderr: a usage error.
      if (err.code === 'commander.help' || USAGE_CODES.has(err.code)) return EXIT_USAGE;
      return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (err instanceof CliError) {
      io.stderr.write(
        formatError({ what: err.message, where: err.where, todo: err.todo, details: err.details }),
      );
      return err.exitCode;
    }
    const message = err instanceof Error ? err.message : String(err);
    io.stderr.write(
      formatError({ what: oneLine(message), todo: 'this is a bug in txcript; please report it' }),
    );
    if (io.env.TXCRIPT_DEBUG !== undefined && err instanceof Error && err.stack !== undefined) {
      io.stderr.write(`${err.stack}\n`);
    }
    return EXIT_RUNTIME;
  } finally {
    await ctx.finish();
  }
}
