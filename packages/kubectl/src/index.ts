export { run, parseArgs, columns, UsageError, type IO } from './cli.js';
export { validateManifest } from './validate.js';
export { Discovery, resourcePath, type Mapping } from './discovery.js';
