/**
 * The status conditions a namespace shows while its content is deleted
 * (pkg/controller/namespace/deletion status_condition_utils.go): each of the
 * five types is True with what went wrong, or False with its "ok" reason and
 * message; a condition's lastTransitionTime moves only when its status does.
 */
import { rfc3339 } from '@kubeling/apimachinery';

export interface NamespaceCondition {
  type: string;
  status: 'True' | 'False';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export const NAMESPACE_DELETION_DISCOVERY_FAILURE = 'NamespaceDeletionDiscoveryFailure';
export const NAMESPACE_DELETION_GV_PARSING_FAILURE = 'NamespaceDeletionGroupVersionParsingFailure';
export const NAMESPACE_DELETION_CONTENT_FAILURE = 'NamespaceDeletionContentFailure';
export const NAMESPACE_CONTENT_REMAINING = 'NamespaceContentRemaining';
export const NAMESPACE_FINALIZERS_REMAINING = 'NamespaceFinalizersRemaining';

const OK: Record<string, [reason: string, message: string]> = {
  [NAMESPACE_DELETION_DISCOVERY_FAILURE]: ['ResourcesDiscovered', 'All resources successfully discovered'],
  [NAMESPACE_DELETION_GV_PARSING_FAILURE]: ['ParsedGroupVersions', 'All legacy kube types successfully parsed'],
  [NAMESPACE_DELETION_CONTENT_FAILURE]: ['ContentDeleted', 'All content successfully deleted, may be waiting on finalization'],
  [NAMESPACE_CONTENT_REMAINING]: ['ContentRemoved', 'All content successfully removed'],
  [NAMESPACE_FINALIZERS_REMAINING]: ['ContentHasNoFinalizers', 'All content-preserving finalizers finished'],
};
const TYPES = Object.keys(OK);

/** Collects what one pass of content deletion found, then turns it into conditions (namespaceConditionUpdater). */
export class NamespaceConditionUpdater {
  private readonly found = new Map<string, NamespaceCondition>();
  private readonly contentErrors: string[] = [];

  constructor(private readonly now: () => string = rfc3339) {}

  private set(type: string, reason: string, message: string): void {
    this.found.set(type, { type, status: 'True', lastTransitionTime: this.now(), reason, message });
  }

  /** ProcessDiscoverResourcesErr: `failing` is how many group versions failed, when only some did. */
  discoveryFailed(message: string, failing?: number): void {
    this.set(
      NAMESPACE_DELETION_DISCOVERY_FAILURE,
      'DiscoveryFailed',
      failing === undefined ? message : `Discovery failed for some groups, ${failing} failing: ${message}`,
    );
  }

  /** ProcessDeleteContentErr. */
  deleteContentFailed(message: string): void {
    this.contentErrors.push(message);
  }

  /** ProcessContentTotals: instances left by `resource.group`, and by finalizer. */
  contentTotals(remaining: ReadonlyMap<string, number>, finalizers: ReadonlyMap<string, number>): void {
    const left = [...remaining].filter(([, n]) => n > 0).map(([gr, n]) => `${gr} has ${n} resource instances`);
    if (remaining.size) this.set(NAMESPACE_CONTENT_REMAINING, 'SomeResourcesRemain', `Some resources are remaining: ${left.sort().join(', ')}`);
    const held = [...finalizers].filter(([, n]) => n > 0).map(([f, n]) => `${f} in ${n} resource instances`);
    if (finalizers.size) {
      this.set(NAMESPACE_FINALIZERS_REMAINING, 'SomeFinalizersRemain', `Some content in the namespace has finalizers remaining: ${held.sort().join(', ')}`);
    }
  }

  /** The namespace's conditions after this pass; `changed` when any differs from `old`. */
  update(old: readonly NamespaceCondition[]): { conditions: NamespaceCondition[]; changed: boolean } {
    if (this.contentErrors.length && !this.found.has(NAMESPACE_DELETION_CONTENT_FAILURE)) {
      const msgs = [...this.contentErrors].sort();
      this.set(
        NAMESPACE_DELETION_CONTENT_FAILURE,
        'ContentDeletionFailed',
        `Failed to delete all resource types, ${msgs.length} remaining: ${msgs.join(', ')}`,
      );
    }
    const conditions = old.map((c) => ({ ...c }));
    let changed = false;
    for (const type of TYPES) {
      const [reason, message] = OK[type]!;
      const want = this.found.get(type) ?? { type, status: 'False', lastTransitionTime: this.now(), reason, message };
      const cur = conditions.find((c) => c.type === type);
      if (!cur) {
        conditions.push(want);
        changed = true;
      } else if (cur.status !== want.status || cur.reason !== want.reason || cur.message !== want.message) {
        if (cur.status !== want.status) cur.lastTransitionTime = this.now();
        Object.assign(cur, { status: want.status, reason: want.reason, message: want.message });
        changed = true;
      }
    }
    return { conditions, changed };
  }
}
