export * from './types.js';
export { GrpcRuntime, serveCri, grpcTarget, type CriServer } from './grpc.js';
export * from './logs.js';
export { parseImageRef, type ImageRef } from './image-ref.js';
