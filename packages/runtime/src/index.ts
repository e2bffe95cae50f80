export { KubelingRuntime, IpPool, type RuntimeOptions } from './runtime.js';
export { parseImageRef, type ImageRef } from './images.js';
