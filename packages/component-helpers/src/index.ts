export * from './taints.js';
export * from './nodeaffinity.js';
export * from './resources.js';
export * from './pods.js';
export * from './component.js';
export * from './quota.js';
export * from './pdb.js';
