import path from 'node:path';
import { transcriptContract } from '../transcript.contract.ts';
import { filesBackend } from './backend.ts';
import { JsonlFile } from './jsonl.ts';

transcriptContract(
  'files',
  filesBackend((home) => {
    const file = path.join(home, 'agent.jsonl');
    return { open: () => new JsonlFile(file), close: (log) => log.close() };
  }),
);
