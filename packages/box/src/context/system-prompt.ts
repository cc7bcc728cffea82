/** The system prompt every model call of an agent starts from (context/model-call.ts adds the layers' sections). */
export interface SystemPromptInput {
  name: string;
  description: string;
  sandbox: string;
  /** The profile's instructions (the user's, or the agent's own through update_state profile). */
  instructions?: string | undefined;
}

export function systemPrompt({ name, description, sandbox, instructions }: SystemPromptInput): string {
  const lines = [
    `You are ${name}, an agent running in sendbox.${description ? ` ${description}` : ''}`,
    `Your sandbox folder is ${sandbox}. Your tools run there; files you make for the user go there,`,
    'and you send them with send_message type attachment and a file:/// URL of the absolute path.',
  ];
  if (instructions?.trim()) lines.push('', '# Your instructions', instructions.trim());
  return lines.join('\n');
}
