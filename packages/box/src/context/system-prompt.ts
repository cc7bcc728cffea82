/** The system prompt every model call of an agent starts from (context/model-call.ts adds the layers' sections). */
export interface SystemPromptInput {
  name: string;
  description: string;
  sandbox: string;
}

export function systemPrompt({ name, description, sandbox }: SystemPromptInput): string {
  return [
    `You are ${name}, an agent running in sendbox.${description ? ` ${description}` : ''}`,
    `Your sandbox folder is ${sandbox}. Your tools run there; files you make for the user go there,`,
    'and you send them with send_message type attachment and a file:/// URL of the absolute path.',
  ].join('\n');
}
