/**
 * The Foo kind (samplecontroller.k8s.io/v1alpha1), as sample-controller's
 * pkg/apis/samplecontroller/v1alpha1/types.go declares it, and the shapes of
 * the built-in objects this operator reads and writes.
 */
import type { appsv1, KubeObject } from '@kubeling/api';

export const GROUP = 'samplecontroller.k8s.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'Foo';

export interface FooSpec {
  deploymentName?: string;
  /** Optional: a Deployment made without it gets the apiserver's default of 1. */
  replicas?: number;
}

export interface FooStatus {
  availableReplicas?: number;
}

export interface Foo extends KubeObject {
  spec?: FooSpec;
  status?: FooStatus;
}

/** A Deployment as the informer stores it: metadata always present. */
export type Deployment = appsv1.Deployment & KubeObject;

/** The collection paths, cluster-wide or in one namespace. */
export const foosPath = (ns?: string): string => `/apis/${API_VERSION}/${ns ? `namespaces/${ns}/` : ''}foos`;
export const deploymentsPath = (ns?: string): string => `/apis/apps/v1/${ns ? `namespaces/${ns}/` : ''}deployments`;
