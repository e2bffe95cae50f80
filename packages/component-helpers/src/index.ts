export * from './taints.js';
export * from './nodeaffinity.js';
export * from './resources.js';
export * from './pods.js';
export * from './component.js';
