/**
 * A client of a control plane by objects rather than paths: it finds each
 * kind's resource through discovery (as client-go's RESTMapper), reading
 * discovery again when a kind is unknown, so that kinds of CustomResourceDefinitions
 * installed during a test are found. Failures throw the API's Status as a
 * `StatusError` (`e.status.reason`, `e.status.code`).
 */
import { DiscoveryClient, parseGroupVersion, resourcePath, restMapping, type RestClient } from '@kubeling/client';
import { failure } from '@kubeling/apimachinery';
import { StatusError } from './status.js';

type Query = Record<string, string | number | boolean | undefined>;

/** The path-level client under an ObjectClient: requests by path, JSON in and out, failures as StatusError. */
export interface RawClient {
  request<T = unknown>(o: {
    method?: string;
    path: string;
    query?: Query;
    body?: unknown;
    contentType?: string;
    accept?: string;
    headers?: Record<string, string>;
  }): Promise<T>;
  get<T = unknown>(path: string, query?: Query): Promise<T>;
  post<T = unknown>(path: string, body: unknown, query?: Query): Promise<T>;
  put<T = unknown>(path: string, body: unknown, query?: Query): Promise<T>;
  patch<T = unknown>(path: string, body: unknown, contentType: string, query?: Query): Promise<T>;
  delete<T = unknown>(path: string, body?: unknown, query?: Query): Promise<T>;
  watch<T = unknown>(path: string, query: Query, onEvent: (ev: WatchEvent<T>) => void, signal?: AbortSignal): Promise<void>;
  close(): void;
}

/** One event of a watch. */
export interface WatchEvent<T = unknown> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** Where a kind is served, as discovery says. */
export interface ResourceInfo {
  group: string;
  version: string;
  /** The plural: the URL segment. */
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: readonly string[];
  subresources: readonly string[];
}

/** Any Kubernetes object: apiVersion, kind and metadata, and whatever its kind holds. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name?: string;
    generateName?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[];
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/** A list of objects with the list's resourceVersion. */
export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
}

export interface ApplyOptions {
  /** The field manager (`kubeling-testenv`). */
  fieldManager?: string;
  /** Take over fields another manager owns. */
  force?: boolean;
}

export interface DeleteOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  gracePeriodSeconds?: number;
}

/** Which object: by apiVersion, kind, name and (for namespaced kinds) namespace. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

export class ObjectClient {
  private readonly discovery: DiscoveryClient;

  constructor(
    /** The path-level client underneath, for requests this class does not cover. */
    readonly rest: RawClient,
    /** The namespace used when an object names none (`default`). */
    readonly defaultNamespace = 'default',
  ) {
    this.discovery = new DiscoveryClient(rest as RestClient);
  }

  /** The resource serving `apiVersion`/`kind`; discovery is read again once when the kind is unknown. */
  async resourceFor(apiVersion: string, kind: string): Promise<ResourceInfo> {
    const { group, version } = parseGroupVersion(apiVersion);
    const find = async (maxAgeMs: number) => {
      const r = restMapping(await this.discovery.discover(maxAgeMs), group, kind, version);
      return r && r.version === version ? r : undefined;
    };
    const r = (await find(Number.POSITIVE_INFINITY)) ?? (await find(0));
    if (!r) throw failure('NotFound', `the server doesn't have a resource type for kind "${kind}" in version "${apiVersion}"`);
    return r;
  }

  private async path(apiVersion: string, kind: string, namespace: string | undefined, name?: string): Promise<string> {
    const r = await this.resourceFor(apiVersion, kind);
    const base = resourcePath(r, r.namespaced ? (namespace ?? this.defaultNamespace) : undefined);
    return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
  }

  private refOf(obj: KubeObject | ObjectRef): ObjectRef {
    if ('metadata' in obj) {
      const name = obj.metadata.name;
      if (!name) throw new Error(`${obj.kind} has no metadata.name`);
      return { apiVersion: obj.apiVersion, kind: obj.kind, name, ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}) };
    }
    return obj;
  }

  async get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T> {
    return this.rest.get<T>(await this.path(ref.apiVersion, ref.kind, ref.namespace, ref.name));
  }

  /** The object, or undefined when it does not exist. */
  async tryGet<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    try {
      return await this.get<T>(ref);
    } catch (e) {
      if (e instanceof StatusError && e.status.code === 404) return undefined;
      throw e;
    }
  }

  /** Objects of a kind: in `namespace`, or in every namespace when it is left out. */
  async list<T extends KubeObject = KubeObject>(apiVersion: string, kind: string, o: ListOptions = {}): Promise<KubeList<T>> {
    const r = await this.resourceFor(apiVersion, kind);
    const query: Record<string, string | number> = {};
    if (o.labelSelector) query.labelSelector = o.labelSelector;
    if (o.fieldSelector) query.fieldSelector = o.fieldSelector;
    if (o.limit) query.limit = o.limit;
    return this.rest.get<KubeList<T>>(resourcePath(r, o.namespace), query);
  }

  async create<T extends KubeObject>(obj: T): Promise<T> {
    return this.rest.post<T>(await this.path(obj.apiVersion, obj.kind, obj.metadata.namespace), obj);
  }

  /** PUT: replaces the object (its resourceVersion, when set, must be current). */
  async update<T extends KubeObject>(obj: T): Promise<T> {
    const ref = this.refOf(obj);
    return this.rest.put<T>(await this.path(ref.apiVersion, ref.kind, ref.namespace, ref.name), obj);
  }

  /** PUT to the status subresource. */
  async updateStatus<T extends KubeObject>(obj: T): Promise<T> {
    const ref = this.refOf(obj);
    return this.rest.put<T>(`${await this.path(ref.apiVersion, ref.kind, ref.namespace, ref.name)}/status`, obj);
  }

  /** Server-side apply: creates the object or merges the fields this manager sets. */
  async apply<T extends KubeObject>(obj: T, o: ApplyOptions = {}): Promise<T> {
    const ref = this.refOf(obj);
    const query: Record<string, string | boolean> = { fieldManager: o.fieldManager ?? 'kubeling-testenv' };
    if (o.force) query.force = true;
    return this.rest.patch<T>(await this.path(ref.apiVersion, ref.kind, ref.namespace, ref.name), obj, 'application/apply-patch+yaml', query);
  }

  /** A merge patch (`application/merge-patch+json`) unless `contentType` names another kind of patch. */
  async patch<T extends KubeObject = KubeObject>(ref: ObjectRef, patch: unknown, contentType = 'application/merge-patch+json'): Promise<T> {
    return this.rest.patch<T>(await this.path(ref.apiVersion, ref.kind, ref.namespace, ref.name), patch, contentType);
  }

  /** Deletes the object; true when it was there. Finalizers may keep it a while: see `waitFor`. */
  async delete(obj: KubeObject | ObjectRef, o: DeleteOptions = {}): Promise<boolean> {
    const ref = this.refOf(obj);
    const body = { kind: 'DeleteOptions', apiVersion: 'v1', ...o };
    try {
      await this.rest.delete(await this.path(ref.apiVersion, ref.kind, ref.namespace, ref.name), body);
      return true;
    } catch (e) {
      if (e instanceof StatusError && e.status.code === 404) return false;
      throw e;
    }
  }

  /**
   * Watches a kind (in `namespace`, or everywhere) from `resourceVersion`,
   * handing each event to `onEvent` until `signal` aborts or the server ends
   * the watch.
   */
  async watch<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    onEvent: (ev: WatchEvent<T>) => void,
    o: ListOptions & { resourceVersion?: string; signal?: AbortSignal } = {},
  ): Promise<void> {
    const r = await this.resourceFor(apiVersion, kind);
    const query: Record<string, string> = { allowWatchBookmarks: 'true' };
    if (o.labelSelector) query.labelSelector = o.labelSelector;
    if (o.fieldSelector) query.fieldSelector = o.fieldSelector;
    if (o.resourceVersion) query.resourceVersion = o.resourceVersion;
    await this.rest.watch<T>(resourcePath(r, o.namespace), query, onEvent, o.signal);
  }

  /** Forgets what discovery said: the next unknown kind reads it again anyway. */
  invalidate(): void {
    this.discovery.invalidate();
  }

  close(): void {
    this.rest.close();
  }
}
