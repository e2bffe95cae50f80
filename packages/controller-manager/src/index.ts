export { ControllerManager, type ManagerOptions } from './manager.js';
export { controllerDescriptors, selectControllers } from './controllers/index.js';
