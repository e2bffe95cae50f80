export { Scheduler, fitErrorMessage, numFeasibleNodesToFind } from './scheduler.js';
export { SchedulerServer, type SchedulerServerOptions } from './server.js';
export { buildConfig, loadConfig, ConfigError, type SchedulerConfig, type Profile } from './framework/profile.js';
