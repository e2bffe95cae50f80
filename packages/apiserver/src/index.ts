export { buildApiServer, type ApiServer, type ApiServerOptions } from './server.js';
export { EtcdStorage } from './storage/etcd.js';
export { parseRequestInfo, type RequestInfo } from './http/request-info.js';
