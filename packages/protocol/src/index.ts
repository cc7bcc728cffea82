export * from './stored.ts';
export * from './ledger.ts';
export * from './send-message-input.ts';
export * from './errors.ts';
export * from './encoding.ts';
export * from './address.ts';
export * from './tool.ts';
export * from './guidance.ts';
