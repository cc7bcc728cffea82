/**
 * One mcp.json server entry as the connectors form edits it (docs/mcp-client.md): text fields a
 * person can type (one argument, variable, header or folder per line) and back. Editing keeps the
 * keys the form does not show, so a hand-written entry loses nothing; the box checks the result
 * (mcp/config.ts) and names the field when it is wrong. Pure: no I/O.
 */

export type ServerKind = 'stdio' | 'http';
export type ApprovalChoice = 'auto' | 'ask' | 'per-tool';

export interface ServerForm {
  name: string;
  kind: ServerKind;
  /** stdio */
  command: string;
  /** One argument per line. */
  args: string;
  /** `NAME=value` per line (`${secret:NAME}` for a box secret). */
  env: string;
  /** Hosts, separated by spaces, commas or new lines. */
  allowDomains: string;
  /** Absolute folders, one per line. */
  readOnly: string;
  /** http */
  url: string;
  /** `Name: value` per line. */
  headers: string;
  transport: '' | 'streamable-http' | 'sse';
  allowPrivateHost: boolean;
  /** both */
  description: string;
  approval: ApprovalChoice;
  /** `tool = ask` per line (`*` for every other tool), when `approval` is per tool. */
  approvalRules: string;
  /** Seconds, empty for the default (60). */
  timeoutSeconds: string;
  disabled: boolean;
}

/** A line the form cannot turn into the entry: which field, which line, what to write. */
export class FormProblem extends Error {}

const STDIO_KEYS = ['command', 'args', 'env', 'allowDomains', 'readOnly'] as const;
const HTTP_KEYS = ['url', 'headers', 'transport', 'allowPrivateHost'] as const;

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function pairs(value: unknown, separator: string): string {
  return Object.entries(record(value))
    .map(([key, item]) => `${key}${separator}${typeof item === 'string' ? item : JSON.stringify(item)}`)
    .join('\n');
}

export function emptyForm(kind: ServerKind = 'stdio'): ServerForm {
  return formOf('', { [kind === 'stdio' ? 'command' : 'url']: '' });
}

/** The form for an entry as mcp.json holds it. */
export function formOf(name: string, raw: unknown): ServerForm {
  const entry = record(raw);
  const approval = entry.approval;
  const timeout = entry.timeoutMs;
  return {
    name,
    kind: 'url' in entry && !('command' in entry) ? 'http' : 'stdio',
    command: typeof entry.command === 'string' ? entry.command : '',
    args: strings(entry.args).join('\n'),
    env: pairs(entry.env, '='),
    allowDomains: strings(entry.allowDomains).join('\n'),
    readOnly: strings(entry.readOnly).join('\n'),
    url: typeof entry.url === 'string' ? entry.url : '',
    headers: pairs(entry.headers, ': '),
    transport: entry.transport === 'sse' || entry.transport === 'streamable-http' ? entry.transport : '',
    allowPrivateHost: entry.allowPrivateHost === true,
    description: typeof entry.description === 'string' ? entry.description : '',
    approval:
      approval === 'ask' ? 'ask' : typeof approval === 'object' && approval !== null ? 'per-tool' : 'auto',
    approvalRules: typeof approval === 'object' && approval !== null ? pairs(approval, ' = ') : '',
    timeoutSeconds: typeof timeout === 'number' ? String(timeout / 1000) : '',
    disabled: entry.disabled === true,
  };
}

function lines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

function parsePairs(text: string, separator: string, field: string, example: string): Record<string, string> {
  const out: Record<string, string> = {};
  lines(text).forEach((line, index) => {
    const at = line.indexOf(separator);
    const key = at > 0 ? line.slice(0, at).trim() : '';
    if (key === '') {
      throw new FormProblem(`${field}, line ${index + 1}: write ${example}`);
    }
    out[key] = line.slice(at + separator.length).trim();
  });
  return out;
}

/**
 * The entry the form describes, on top of `previous` (the entry as it was, whose keys the form
 * does not show are kept). Empty fields are left out, so the box's defaults apply.
 */
export function entryOf(form: ServerForm, previous: unknown = {}): Record<string, unknown> {
  const entry: Record<string, unknown> = { ...record(previous) };
  delete entry.builtin;
  const set = (key: string, value: unknown, empty: boolean) => {
    if (empty) delete entry[key];
    else entry[key] = value;
  };
  for (const key of form.kind === 'stdio' ? HTTP_KEYS : STDIO_KEYS) delete entry[key];
  if (form.kind === 'stdio') {
    entry.command = form.command.trim();
    const args = form.args.split('\n').filter((line) => line.trim() !== '');
    set('args', args, args.length === 0);
    const env = parsePairs(form.env, '=', 'Environment', 'NAME=value');
    set('env', env, Object.keys(env).length === 0);
    const domains = form.allowDomains.split(/[\s,]+/).filter((host) => host !== '');
    set('allowDomains', domains, domains.length === 0);
    const folders = lines(form.readOnly);
    set('readOnly', folders, folders.length === 0);
  } else {
    entry.url = form.url.trim();
    const headers = parsePairs(form.headers, ':', 'Headers', 'Name: value');
    set('headers', headers, Object.keys(headers).length === 0);
    set('transport', form.transport, form.transport === '');
    set('allowPrivateHost', true, !form.allowPrivateHost);
  }
  set('description', form.description.trim(), form.description.trim() === '');
  if (form.approval === 'per-tool') {
    const rules = parsePairs(
      form.approvalRules,
      '=',
      'Per-tool approval',
      'tool = ask (or auto; * for the rest)',
    );
    for (const [tool, mode] of Object.entries(rules)) {
      if (mode !== 'ask' && mode !== 'auto') {
        throw new FormProblem(
          `Per-tool approval, ${tool}: write "ask" or "auto", not ${JSON.stringify(mode)}`,
        );
      }
    }
    entry.approval = rules;
  } else set('approval', 'ask', form.approval === 'auto');
  const seconds = form.timeoutSeconds.trim();
  if (seconds !== '' && !(Number(seconds) > 0)) {
    throw new FormProblem(`Timeout: write a number of seconds above 0, not ${JSON.stringify(seconds)}`);
  }
  set('timeoutMs', Math.round(Number(seconds) * 1000), seconds === '');
  set('disabled', true, !form.disabled);
  return entry;
}
