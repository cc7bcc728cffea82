/** What an agent is called on the page: its name, or "New agent" until its first prompt names it. */
export function agentTitle(agent: { name: string }): string {
  return agent.name.trim() === '' ? 'New agent' : agent.name;
}
