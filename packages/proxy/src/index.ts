export { Proxier, desiredListeners, type Backend } from './proxier.js';
