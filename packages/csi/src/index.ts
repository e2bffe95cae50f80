export { CsiClient, type CsiHandler, type CsiService, type CsiServices, csiMethods, serveCsi } from './csi.js';
export { type CallOptions, CsiError, codeName, type GrpcStatusName, grpcStatus, grpcTarget, socketPath } from './proto.js';
export { type PluginInfo, RegistrationClient, type RegistrationStatus, serveRegistration } from './registration.js';
export * from './types.js';
