/**
 * The common model: the hub every harness codec converts through.
 *
 * It mirrors the interchange model of the public txcript tool, so a Common
 * transcript serialised by `simple` is the same document txcript writes.
 * Harness-specific detail does not live here; it stays in each harness's
 * native records.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export interface Meta {
  /** Session id, as the originating harness knows it. */
  id: string;
  /** When the session started, RFC 3339 UTC. */
  timestamp: string;
  cwd?: string;
  git_branch?: string;
  title?: string;
  cli_version?: string;
  model?: string;
}

export type Role = 'user' | 'assistant';

export type StopReason =
  'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'aborted' | 'error' | { other: string };

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

export interface ImageSource {
  type: string;
  media_type: string;
  data: string;
}

export type ArtifactSource =
  | { type: 'text'; text: string; media_type?: string }
  | { type: 'base64'; data: string; media_type?: string }
  | { type: 'path'; path: string; media_type?: string };

export interface Artifact {
  id: string;
  name: string;
  source: ArtifactSource;
}

export interface EditOp {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

/**
 * A tool invocation. Typed variants use the Claude-canonical names and keys
 * and are chosen only when the input fits their schema exactly; anything else
 * is `Raw`, so typing never drops or changes a key.
 */
export type Tool =
  | { name: 'Command'; command: string; args?: string }
  | { name: 'Read'; file_path: string; offset?: number; limit?: number }
  | { name: 'Write'; file_path: string; content: string }
  | { name: 'Edit'; file_path: string; old_string: string; new_string: string; replace_all?: boolean }
  | { name: 'MultiEdit'; file_path: string; edits: EditOp[] }
  | {
      name: 'Bash';
      command: string;
      workdir?: string;
      timeout_ms?: number;
      description?: string;
      run_in_background?: boolean;
    }
  | { name: 'Raw'; tool_name: string; input: JsonValue };

/** A tool result payload: text, or the harness's structured output as JSON. */
export type ToolOutput = string | JsonValue;

export type Block =
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string; signature?: string; encrypted?: string }
  | { type: 'tool_use'; id: string; tool: Tool }
  | { type: 'tool_result'; tool_use_id: string; content: ToolOutput; is_error?: boolean }
  | { type: 'image'; source: ImageSource }
  | { type: 'artifact'; artifact: Artifact };

export interface Message {
  role: Role;
  content: Block[];
  /** RFC 3339 UTC. */
  timestamp: string;
  model?: string;
  stop_reason?: StopReason;
  usage?: Usage;
}

export interface Transcript {
  meta: Meta;
  messages: Message[];
}
