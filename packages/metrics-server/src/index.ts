export * from './api.js';
export * from './auth.js';
export * from './decode.js';
export * from './format.js';
export * from './prometheus.js';
export * from './scraper.js';
export * from './server.js';
export * from './storage.js';
