/**
 * Who a request is and what it may do (k8s.io/apiserver pkg/authentication
 * and pkg/authorization): authenticators (client certificates, static and
 * ServiceAccount tokens), authorizers (RBAC, Node, system:masters) and the
 * bootstrap policy. The request filters that apply them, in the order of
 * kube-apiserver's handler chain, are fastify plugins in http/filters/.
 */
export * from './types.js';
export { Authenticator, StaticTokens, parseTokenFile } from './authn.js';
export { RbacAuthorizer, MastersAuthorizer, UnionAuthorizer, ruleAllows, type PolicyRule } from './rbac.js';
export { reconcileBootstrapPolicy, bootstrapPolicy } from './bootstrap.js';
export { NodeAuthorizer } from './node.js';
export { ServiceAccountTokens, type ServiceAccountTokenOptions } from './serviceaccount.js';
