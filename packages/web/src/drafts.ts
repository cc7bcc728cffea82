/** The composer's unsent text per agent, kept in localStorage so a reload or a box restart loses nothing. */
const PREFIX = 'sendbox.draft.';

export function readDraft(agentId: string): string {
  try {
    return localStorage.getItem(PREFIX + agentId) ?? '';
  } catch {
    return '';
  }
}

export function writeDraft(agentId: string, text: string): void {
  try {
    if (text === '') localStorage.removeItem(PREFIX + agentId);
    else localStorage.setItem(PREFIX + agentId, text);
  } catch {
    // Storage disabled or full: the draft lives as long as the page.
  }
}
