import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { SecretStore } from '../../secrets/store.ts';
import { secretsContract } from '../secrets.contract.ts';
import { filesBackend } from './backend.ts';

const key = randomBytes(32);

secretsContract(
  'files',
  filesBackend((home) => ({
    open: () => new SecretStore(path.join(home, 'secrets.enc'), key, 'agent-1'),
    close: () => undefined,
  })),
);
