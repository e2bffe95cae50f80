/**
 * Name, label, annotation and ObjectMeta validation with upstream's messages:
 * k8s.io/apimachinery/pkg/util/validation (the `is*` checks: format.ts, ip.ts),
 * pkg/api/validation (generic.go name functions: generic.ts; objectmeta.go:
 * objectmeta.ts), pkg/api/validation/path (path-segment names: generic.ts) and
 * pkg/apis/meta/v1/validation (labels, label selectors, managed fields:
 * metav1.ts).
 */
export * from './format.js';
export * from './ip.js';
export * from './generic.js';
export * from './metav1.js';
export * from './objectmeta.js';
