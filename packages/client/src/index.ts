export * from './kubeconfig.js';
export * from './rest.js';
export * from './cache.js';
export * from './workqueue.js';
export * from './leaderelection.js';
export * from './events.js';
export * from './component.js';
export * from './remotecommand.js';
