export { Kubelet, type KubeletOptions } from './kubelet.js';
export { criToLines } from './server.js';
