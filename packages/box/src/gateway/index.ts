export { createGatewayApp, type GatewayApp, type GatewayAppOptions } from './app.ts';
export {
  descriptorPath,
  gatewayDescriptorSchema,
  readGatewayDescriptor,
  removeGatewayDescriptor,
  writeGatewayDescriptor,
  type GatewayDescriptor,
} from './descriptor.ts';
export { agentFiles, boxAgentFolders, type AgentFiles, type AgentFolders, type ServedFile } from './files.ts';
export { CONTENT_SECURITY_POLICY } from './static-ui.ts';
export { loginUrl, mintLoginCode, readSessionKey, sessionKeyPath } from './session.ts';
export {
  DEFAULT_GATEWAY_HOST,
  DEFAULT_GATEWAY_PORT,
  GatewayStartError,
  startGateway,
  type GatewayOptions,
  type RunningGateway,
  type SharedGatewayKeys,
} from './server.ts';
export { bindAddress, parsePublicUrl, PublicUrlError, type PublicUrl } from './public-url.ts';
export { mintToken, tokenMatches } from './token.ts';
