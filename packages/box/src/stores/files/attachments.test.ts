import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { AttachmentStore } from '../../attachments/store.ts';
import { attachmentsContract } from '../attachments.contract.ts';
import { filesBackend } from './backend.ts';

attachmentsContract(
  'files',
  filesBackend((home) => ({
    open: () => ({
      store: new AttachmentStore(path.join(home, 'attachments'), 1024),
      readBack: async (file: string) => new Uint8Array(await readFile(file)),
    }),
    close: () => undefined,
  })),
);
