/**
 * The read-only demo agent shown when no model is configured: one
 * conversation whose ledger holds every kind of bubble (thinking, tool calls,
 * a notice, a user upload, text, text with an image, a PDF attachment, a
 * cursor-agent card, a widget and its answer, a secret request).
 *
 * It is not written by hand: a second host on the same data dir runs a
 * scripted model through the real runtime, so every entry comes from the one
 * writer of each format, exactly as a live agent's would. Agents are
 * read-only while no model is configured, the demo included.
 */
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { createAgentHost } from '../host/agent-host.ts';
import type { LocalAgentHost } from '../host/agent-host.ts';
import { agentPaths } from '../stores/files/layout.ts';
import type { AgentHost, RosterRow } from '../host/types.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import type { ScriptedProvider, ScriptedStep } from '../providers/scripted.ts';
import { textPdf } from './demo-pdf.ts';

/** Marks the demo agent in its profile (`harness`), so it is created once per data dir. */
export const DEMO_HARNESS = 'sendbox-demo';
export const DEMO_AGENT_NAME = 'Tour of sendbox';

const CHART_SVG = [
  '<svg xmlns="http://www.w3.org/2000/svg" width="320" height="180" viewBox="0 0 320 180">',
  '<rect width="320" height="180" fill="#f6f8fa"/>',
  '<rect x="30" y="100" width="50" height="60" fill="#4c8bf5"/>',
  '<rect x="100" y="60" width="50" height="100" fill="#4c8bf5"/>',
  '<rect x="170" y="30" width="50" height="130" fill="#4c8bf5"/>',
  '<rect x="240" y="80" width="50" height="80" fill="#4c8bf5"/>',
  '<text x="160" y="20" font-family="sans-serif" font-size="14" text-anchor="middle">Turns per day</text>',
  '</svg>',
].join('\n');

const REPORT_PDF = textPdf('sendbox demo report', [
  'This PDF was written by the demo agent with the write tool,',
  'then sent with send_message type attachment.',
  "The box ingested it into the agent's content-addressed store",
  '(attachments/<sha256>.pdf) and the UI previews it with pdf.js.',
]);

const NOTES = 'Notes from the user\n\n- try every bubble type\n- check the attachment preview\n';

function send(input: Record<string, unknown>): ScriptedStep['toolCalls'] & object {
  return [{ name: 'send_message', input }];
}

function demoScript(sandbox: string): ScriptedStep[] {
  const file = (name: string): string => pathToFileURL(path.join(sandbox, name)).href;
  return [
    // Turn 1: private text only, twice: the box reminds once, then tells the user with a notice.
    { text: 'The user said hi. Plain text is my private scratchpad; nothing here reaches them.' },
    { text: 'Still thinking instead of calling send_message, so the box will post a notice.' },
    // Turn 2: the tour.
    {
      text: 'They want the tour. I will make a chart and a PDF first, then send one bubble of each type.',
      toolCalls: [
        { name: 'write', input: { path: 'chart.svg', content: CHART_SVG } },
        { name: 'write', input: { path: 'report.pdf', content: REPORT_PDF } },
      ],
    },
    {
      toolCalls: send({
        type: 'text',
        content:
          'Hi! I am the **demo agent**. Everything you see from me is a `send_message` call:\n\n' +
          '- plain text like this, in Markdown\n- text with images\n- file attachments\n' +
          '- cursor-agent cards\n- questions with buttons (widgets)\n- secret requests\n\n' +
          'My plain text stays private (open *thinking* to see it).',
      }),
    },
    {
      toolCalls: send({
        type: 'text',
        content: 'Text can carry images:',
        images: [{ url: file('chart.svg'), alt: 'A bar chart' }],
      }),
    },
    { toolCalls: send({ type: 'attachment', url: file('report.pdf'), alt: 'A one-page PDF report' }) },
    { toolCalls: send({ type: 'cursor-agent', bcId: 'bc-demo-0001', title: 'A Cursor cloud agent card' }) },
    {
      toolCalls: send({
        type: 'widget',
        widget: {
          prompt: 'What would you like to see next?',
          helpText: 'A widget ends my turn until you answer.',
          options: [
            { label: 'A secret request', style: 'primary' },
            { label: 'Nothing more', description: 'End the tour here' },
          ],
        },
      }),
    },
    // Turn 3, after the answer.
    {
      toolCalls: send({
        type: 'secret-request',
        secret: {
          label: 'Demo API token',
          description:
            "A masked field: the value goes to the agent's encrypted secret store, never into the chat.",
          name: 'DEMO_API_TOKEN',
        },
      }),
    },
  ];
}

async function playDemo(
  host: LocalAgentHost,
  model: ScriptedProvider,
  id: string,
  sandbox: string,
): Promise<void> {
  model.push(...demoScript(sandbox));
  await host.sendPrompt({ agentId: id, prompt: 'Hi! Are you there?', clientNonce: 'demo-1' });
  await host.idle(id);
  await host.uploadFile({ agentId: id, fileName: 'notes.txt', bytes: new TextEncoder().encode(NOTES) });
  await host.sendPrompt({
    agentId: id,
    prompt: 'Show me every kind of message you can send. My notes are attached.',
    clientNonce: 'demo-2',
  });
  await host.idle(id);
  const widget = (await host.entriesAfter(id, 0)).find(
    (entry) => entry.kind === 'send-message' && entry.message.type === 'widget',
  );
  if (widget === undefined) throw new Error('the demo script did not produce its widget');
  await host.answerWidget({ agentId: id, messageId: widget.id, answer: 'A secret request' });
  await host.idle(id);
  if (model.remaining() !== 0) {
    throw new Error(
      `the demo script has ${model.remaining()} unused steps: the runtime's turn rules changed`,
    );
  }
}

/** The demo agent of this data dir, if there is one. */
export async function findDemoAgent(host: AgentHost): Promise<RosterRow | null> {
  return (await host.listAgents()).find((row) => row.harness === DEMO_HARNESS) ?? null;
}

/**
 * Creates the demo agent in `dataDir` unless it exists. Runs before the
 * serving host opens the data dir, so the two hosts never hold one store.
 */
export async function ensureDemoAgent(dataDir: string): Promise<{ id: string; created: boolean }> {
  const model = scriptedProvider([], 'demo-script');
  const host = await createAgentHost({ dataDir, provider: model, env: {} });
  try {
    const existing = await findDemoAgent(host);
    if (existing !== null) return { id: existing.id, created: false };

    const agent = await host.createAgent({
      name: DEMO_AGENT_NAME,
      description: 'Every kind of message an agent can send. Read-only until a model is configured.',
      harness: DEMO_HARNESS,
    });
    try {
      await playDemo(host, model, agent.id, agentPaths(dataDir, agent.id).sandbox);
    } catch (error) {
      // A half-made demo would be found next time and never completed: remove it.
      await host.idle(agent.id).catch(() => undefined);
      await host.deleteAgent(agent.id).catch(() => undefined);
      throw new Error(
        `could not create the demo agent: ${error instanceof Error ? error.message : String(error)}`,
        {
          cause: error,
        },
      );
    }
    return { id: agent.id, created: true };
  } finally {
    await host.close();
  }
}
