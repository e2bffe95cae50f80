export { KubelingRuntime, type RuntimeOptions } from './runtime.js';
export { IpPool } from './ippool.js';
export { parseImageRef, type ImageRef } from './images.js';
