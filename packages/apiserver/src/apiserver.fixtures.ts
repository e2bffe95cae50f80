/**
 * Objects the apiserver integration tests create (apiserver*.integration.test.ts).
 */

/** A ConfigMap manifest: `data` defaults to `{ a: '1' }`; labels only when given. */
export const cm = (name: string, data: Record<string, string> = { a: '1' }, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data,
});
