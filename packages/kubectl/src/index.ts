export { run, parseArgs, columns, validateManifest, UsageError, type IO } from './cli.js';
export { Discovery, resourcePath, type Mapping } from './discovery.js';
