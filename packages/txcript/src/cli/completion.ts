/**
 * `txcript completion bash|zsh|fish`: a completion script made from the
 * command tree itself (commands, their options, which options take a value),
 * so it cannot fall behind the commands. It completes harness ids after
 * `--from`, `--with` and `--to`, files after `--out` and `--cwd` and for
 * `convert`, and session ids for `view`, `export` and `continue` (by running
 * `txcript list` when asked; subagent rows are left out).
 */
import { usageError } from './errors.ts';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

interface OptionSpec {
  long?: string;
  short?: string;
  takesValue: boolean;
  description: string;
}

export interface CommandSpec {
  name: string;
  description: string;
  options: OptionSpec[];
}

/** The parts of a commander program a completion reads. */
export interface CommandTree {
  readonly commands: ReadonlyArray<{
    name(): string;
    description(): string;
    readonly options: ReadonlyArray<{
      long?: string;
      short?: string;
      required: boolean;
      optional: boolean;
      description: string;
    }>;
  }>;
}

/** What a completion needs to know of a command tree. */
export function describeCommands(program: CommandTree): CommandSpec[] {
  return program.commands.map((c) => ({
    name: c.name(),
    description: c.description(),
    options: [
      ...c.options.map((o) => ({
        ...(o.long !== undefined ? { long: o.long } : {}),
        ...(o.short !== undefined ? { short: o.short } : {}),
        takesValue: o.required || o.optional,
        description: o.description,
      })),
      { long: '--help', short: '-h', takesValue: false, description: 'show help' },
    ],
  }));
}

const HARNESS_OPTIONS = ['--from', '--with', '--to'];
const PATH_OPTIONS = ['--out', '--cwd'];
const SESSION_COMMANDS = ['view', 'export', 'continue'];
const FILE_COMMANDS = ['convert'];
/** Session ids from the list table: first column, header and subagent rows (`└ id`) skipped. */
const LIST_IDS = `txcript list 2>/dev/null | awk 'NR > 1 && $1 != "└" { print $1 }'`;

function flags(o: OptionSpec): string[] {
  return [o.short, o.long].filter((f): f is string => f !== undefined);
}

/** Text safe inside a single-quoted shell word and a zsh `[description]`. */
function clean(text: string): string {
  return text.replace(/['\\]/g, '’').replace(/[[\]]/g, '').replace(/:/g, ' -').replace(/\s+/g, ' ').trim();
}

function bash(commands: readonly CommandSpec[], harnesses: readonly string[]): string {
  const valued = new Set(commands.flatMap((c) => c.options.filter((o) => o.takesValue).flatMap(flags)));
  const plainValued = [...valued].filter((f) => !HARNESS_OPTIONS.includes(f) && !PATH_OPTIONS.includes(f));
  const cases = commands
    .map((c) => `    ${c.name}) opts='${c.options.flatMap(flags).join(' ')}' ;;`)
    .join('\n');
  return `# txcript completion for bash: source <(txcript completion bash)
_txcript() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmd="\${COMP_WORDS[1]}" opts=''
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W '${commands.map((c) => c.name).join(' ')}' -- "$cur"))
    return
  fi
  case "$prev" in
    ${HARNESS_OPTIONS.join('|')}) COMPREPLY=($(compgen -W '${harnesses.join(' ')}' -- "$cur")); return ;;
    ${PATH_OPTIONS.join('|')}) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    ${plainValued.join('|')}) COMPREPLY=(); return ;;
  esac
  case "$cmd" in
${cases}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    return
  fi
  case "$cmd" in
    ${SESSION_COMMANDS.join('|')}) COMPREPLY=($(compgen -W "$(${LIST_IDS})" -- "$cur")) ;;
    ${FILE_COMMANDS.join('|')}) COMPREPLY=($(compgen -f -- "$cur")) ;;
    completion) COMPREPLY=($(compgen -W '${SHELLS.join(' ')}' -- "$cur")) ;;
  esac
}
complete -F _txcript txcript
`;
}

function zshOption(o: OptionSpec, harnesses: readonly string[]): string {
  const names = flags(o);
  const spec = names.length > 1 ? `'(${names.join(' ')})'{${names.join(',')}}` : `'${names[0]!}`;
  const open = names.length > 1 ? "'" : '';
  const long = o.long ?? '';
  const value = !o.takesValue
    ? ''
    : HARNESS_OPTIONS.includes(long)
      ? `:harness:(${harnesses.join(' ')})`
      : PATH_OPTIONS.includes(long)
        ? ':path:_files'
        : ':value: ';
  return `${spec}${open}[${clean(o.description)}]${value}'`;
}

function zsh(commands: readonly CommandSpec[], harnesses: readonly string[]): string {
  const list = commands.map((c) => `    '${c.name}:${clean(c.description)}'`).join('\n');
  const cases = commands
    .map((c) => {
      const args = c.options.map((o) => `        ${zshOption(o, harnesses)}`);
      const operand = SESSION_COMMANDS.includes(c.name)
        ? "'1:session:_txcript_sessions'"
        : FILE_COMMANDS.includes(c.name)
          ? "'1:file:_files'"
          : c.name === 'completion'
            ? `'1:shell:(${SHELLS.join(' ')})'`
            : c.name === 'search'
              ? "'*:query: '"
              : undefined;
      if (operand !== undefined) args.push(`        ${operand}`);
      return `    ${c.name})\n      _arguments -s \\\n${args.join(' \\\n')} ;;`;
    })
    .join('\n');
  return `#compdef txcript
# txcript completion for zsh: source <(txcript completion zsh), or save as _txcript in $fpath
_txcript_sessions() {
  local -a ids
  ids=(\${(f)"$(${LIST_IDS})"})
  compadd -a ids
}
_txcript() {
  local -a commands
  commands=(
${list}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  local cmd=$words[2]
  shift words
  (( CURRENT-- ))
  case $cmd in
${cases}
  esac
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _txcript "$@"
else
  compdef _txcript txcript
fi
`;
}

function fish(commands: readonly CommandSpec[], harnesses: readonly string[]): string {
  const lines = [
    '# txcript completion for fish: txcript completion fish | source',
    'complete -c txcript -f',
    ...commands.map(
      (c) => `complete -c txcript -n __fish_use_subcommand -a ${c.name} -d '${clean(c.description)}'`,
    ),
  ];
  for (const c of commands) {
    const when = `-n '__fish_seen_subcommand_from ${c.name}'`;
    for (const o of c.options) {
      const parts = [`complete -c txcript ${when}`];
      if (o.short !== undefined) parts.push(`-s ${o.short.replace(/^-/, '')}`);
      if (o.long !== undefined) parts.push(`-l ${o.long.replace(/^--/, '')}`);
      if (o.takesValue) {
        parts.push('-r');
        if (HARNESS_OPTIONS.includes(o.long ?? '')) parts.push(`-a '${harnesses.join(' ')}'`);
        else if (PATH_OPTIONS.includes(o.long ?? '')) parts.push('-F');
      }
      parts.push(`-d '${clean(o.description)}'`);
      lines.push(parts.join(' '));
    }
  }
  lines.push(
    `complete -c txcript -n '__fish_seen_subcommand_from ${SESSION_COMMANDS.join(' ')}' -a '(${LIST_IDS.replaceAll("'", "\\'")})'`,
    `complete -c txcript -n '__fish_seen_subcommand_from ${FILE_COMMANDS.join(' ')}' -F`,
    `complete -c txcript -n '__fish_seen_subcommand_from completion' -a '${SHELLS.join(' ')}'`,
  );
  return `${lines.join('\n')}\n`;
}

export function completionScript(
  shell: string,
  commands: readonly CommandSpec[],
  harnesses: readonly string[],
): string {
  switch (shell) {
    case 'bash':
      return bash(commands, harnesses);
    case 'zsh':
      return zsh(commands, harnesses);
    case 'fish':
      return fish(commands, harnesses);
    default:
      throw usageError({
        what: `no completion for the shell "${shell}"`,
        todo: `use one of: ${SHELLS.join(', ')}`,
      });
  }
}
