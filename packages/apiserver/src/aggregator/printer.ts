/**
 * `kubectl get apiservices` (kube-aggregator pkg/registry/apiservice
 * tableconvertor): where each group-version is served, and whether it is
 * available — with the reason when it is not.
 */
import type { apiregistrationv1 } from '@kubeling/api';
import { AGE, NAME, age, col, printer, type Printer } from '../http/printers/columns.js';

export function availableColumn(a: apiregistrationv1.APIService): string {
  const c = (a.status?.conditions ?? []).find((x) => x.type === 'Available');
  if (!c) return 'Unknown';
  return c.status === 'True' ? 'True' : `${c.status} (${c.reason ?? ''})`;
}

export const aggregatorPrinters: Record<string, Printer> = {
  'apiregistration.k8s.io/apiservices': printer<apiregistrationv1.APIService>(
    [NAME, col('Service', 'The reference to the service that hosts this API endpoint.'), col('Available', 'Whether this service is available.'), AGE],
    (a, now) => {
      const s = a.spec?.service;
      return [a.metadata?.name, s ? `${s.namespace}/${s.name}` : 'Local', availableColumn(a), age(a, now)];
    },
  ),
};
