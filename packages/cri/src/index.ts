export * from './types.js';
export { GrpcRuntime, serveCri, grpcTarget, type CriServer } from './grpc.js';
export * from './logs.js';
