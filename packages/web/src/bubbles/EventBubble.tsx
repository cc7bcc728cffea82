/**
 * Something that happened to the agent itself (a ledger `event`, grok-bot-format.md §7): a thin
 * line such as "Renamed from A to B". Types this renderer does not know say their type.
 */
import type { EventEntry } from '@sendbox/protocol';

const AUTOMATION_VERB: Record<string, string> = {
  created: 'Created',
  updated: 'Updated',
  enabled: 'Resumed',
  disabled: 'Paused',
  deleted: 'Deleted',
};

export function eventText(entry: EventEntry): string {
  const { event } = entry;
  if (event.type === 'name-changed' && event.from !== undefined && event.to !== undefined)
    return `Renamed from “${event.from}” to “${event.to}”`;
  if (event.type === 'automation-changed' && typeof event.automationName === 'string') {
    const verb = typeof event.action === 'string' ? AUTOMATION_VERB[event.action] : undefined;
    return `${verb ?? 'Changed'} routine “${event.automationName}”`;
  }
  return `Agent event: ${event.type}`;
}

export function EventBubble({ entry }: { entry: EventEntry }) {
  return (
    <div className="notice event" data-testid="agent-event" data-event-type={entry.event.type}>
      {eventText(entry)}
    </div>
  );
}
