/**
 * kubeling-controller-manager.
 *
 *   --kubeconfig=PATH | --master=URL
 *   --controllers=*            (`*,-name` to leave one out)
 *   --leader-elect=true        --leader-elect-lease-duration=15s ...
 *   --bind-address=127.0.0.1   --secure-port=10257 (health and metrics)
 *   --kube-api-qps=20 --kube-api-burst=30
 *   --service-account-private-key-file=PATH  --root-ca-file=PATH  (legacy token Secrets)
 *   --node-monitor-grace-period=50s --node-monitor-period=5s --terminated-pod-gc-threshold=12500
 *   --cluster-signing-cert-file=PATH --cluster-signing-key-file=PATH --cluster-signing-duration=8760h  (CSR signing)
 *   --horizontal-pod-autoscaler-sync-period=15s --horizontal-pod-autoscaler-tolerance=0.1
 *   --horizontal-pod-autoscaler-downscale-stabilization=5m --horizontal-pod-autoscaler-cpu-initialization-period=5m
 *   --horizontal-pod-autoscaler-initial-readiness-delay=30s
 *
 * The common flags, health, leader election and signals are the component
 * shell's (`runComponent`); this file adds the controller-manager's own flags.
 */
import { readFileSync } from 'node:fs';
import { parseDuration as duration } from '@kubeling/apimachinery';
import { runComponent } from '@kubeling/component-helpers';
import { ControllerManager } from './manager.js';

runComponent({
  name: 'controller-manager',
  defaults: { securePort: 10257, qps: 20, burst: 30 },
  flags: {
    controllers: { type: 'string', default: '*' },
    'concurrent-syncs': { type: 'string', default: '5' },
    'node-monitor-grace-period': { type: 'string', default: '50s' },
    'node-monitor-period': { type: 'string', default: '5s' },
    'terminated-pod-gc-threshold': { type: 'string', default: '12500' },
    'service-account-private-key-file': { type: 'string' },
    'root-ca-file': { type: 'string' },
    'cluster-signing-cert-file': { type: 'string' },
    'cluster-signing-key-file': { type: 'string' },
    'cluster-signing-duration': { type: 'string', default: '8760h' },
    'horizontal-pod-autoscaler-sync-period': { type: 'string', default: '15s' },
    'horizontal-pod-autoscaler-tolerance': { type: 'string', default: '0.1' },
    'horizontal-pod-autoscaler-downscale-stabilization': { type: 'string', default: '5m' },
    'horizontal-pod-autoscaler-cpu-initialization-period': { type: 'string', default: '5m' },
    'horizontal-pod-autoscaler-initial-readiness-delay': { type: 'string', default: '30s' },
  },
  errorStack: true,
  create: (options, values) =>
    new ControllerManager({
      ...options,
      controllers: values.controllers.split(','),
      workers: Number(values['concurrent-syncs']),
      nodeMonitorGracePeriodMs: duration(values['node-monitor-grace-period']),
      nodeMonitorPeriodMs: duration(values['node-monitor-period']),
      podGC: { terminatedThreshold: Number(values['terminated-pod-gc-threshold']) },
      hpa: {
        syncPeriodMs: duration(values['horizontal-pod-autoscaler-sync-period']),
        tolerance: Number(values['horizontal-pod-autoscaler-tolerance']),
        downscaleStabilizationMs: duration(values['horizontal-pod-autoscaler-downscale-stabilization']),
        cpuInitializationPeriodMs: duration(values['horizontal-pod-autoscaler-cpu-initialization-period']),
        initialReadinessDelayMs: duration(values['horizontal-pod-autoscaler-initial-readiness-delay']),
      },
      ...(values['service-account-private-key-file'] ? { serviceAccountKeyPem: readFileSync(values['service-account-private-key-file'], 'utf8') } : {}),
      ...(values['root-ca-file'] ? { rootCAPem: readFileSync(values['root-ca-file'], 'utf8') } : {}),
      // The CSR signer runs only with a CA to sign with, as upstream's csrsigning.
      ...(values['cluster-signing-cert-file'] && values['cluster-signing-key-file']
        ? {
            csrSigning: {
              certPem: readFileSync(values['cluster-signing-cert-file'], 'utf8'),
              keyPem: readFileSync(values['cluster-signing-key-file'], 'utf8'),
              durationMs: duration(values['cluster-signing-duration']),
            },
          }
        : {}),
    }),
});
