export * from './json-patch.js';
export * from './merge-patch.js';
export * from './strategic-merge-patch.js';
