/**
 * meta.k8s.io/v1 types shared by every kind: ObjectMeta, ListMeta, OwnerReference,
 * LabelSelector, Status, DeleteOptions, and the `kindOf` builder that gives a kind
 * its TypeMeta + metadata + spec/status shape.
 */
import { Type, type TProperties } from '@sinclair/typebox';
import { boolean, int64, list, map, object, opaque, string, time, type Static } from './dsl.js';

const M = 'io.k8s.apimachinery.pkg.apis.meta.v1.';

export const OwnerReference = object(
  M + 'OwnerReference',
  'OwnerReference contains enough information to let you identify an owning object. An owning object must be in the same namespace as the dependent, or be cluster-scoped, so there is no namespace field.',
  {
    apiVersion: string('API version of the referent.'),
    kind: string('Kind of the referent.'),
    name: string('Name of the referent.'),
    uid: string('UID of the referent.'),
    controller: boolean('If true, this reference points to the managing controller.'),
    blockOwnerDeletion: boolean(
      'If true, AND if the owner has the "foregroundDeletion" finalizer, then the owner cannot be deleted from the key-value store until this reference is removed.',
    ),
  },
  ['apiVersion', 'kind', 'name', 'uid'],
);

export const ManagedFieldsEntry = object(
  M + 'ManagedFieldsEntry',
  'ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the resource that the fieldset applies to.',
  {
    manager: string('Manager is an identifier of the workflow managing these fields.'),
    operation: string(
      'Operation is the type of operation which lead to this ManagedFieldsEntry being created. The only valid values for this field are "Apply" and "Update".',
    ),
    apiVersion: string('APIVersion defines the version of this resource that this field set applies to.'),
    time: time('Time is the timestamp of when the ManagedFields entry was added.'),
    fieldsType: string('FieldsType is the discriminator for the different fields format and version. There is currently only one possible value: "FieldsV1"'),
    fieldsV1: opaque('FieldsV1 holds the first JSON version format as described in the "FieldsV1" type.'),
    subresource: string(
      'Subresource is the name of the subresource used to update that object, or empty string if the object was updated through the main resource.',
    ),
  },
);

export const ObjectMeta = object(
  M + 'ObjectMeta',
  'ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.',
  {
    name: string('Name must be unique within a namespace. Cannot be updated.'),
    generateName: string('GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided.'),
    namespace: string('Namespace defines the space within which each name must be unique. Cannot be updated.'),
    selfLink: string('Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.'),
    uid: string('UID is the unique in time and space value for this object. Populated by the system. Read-only.'),
    resourceVersion: string(
      'An opaque value that represents the internal version of this object that can be used by clients to determine when objects have changed. Populated by the system. Read-only.',
    ),
    generation: int64('A sequence number representing a specific generation of the desired state. Populated by the system. Read-only.'),
    creationTimestamp: time('CreationTimestamp is a timestamp representing the server time when this object was created. Populated by the system. Read-only.'),
    deletionTimestamp: time(
      'DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted. Set by the server when a graceful deletion is requested by the user. Read-only.',
    ),
    deletionGracePeriodSeconds: int64(
      'Number of seconds allowed for this object to gracefully terminate before it will be removed from the system. Only set when deletionTimestamp is also set. Read-only.',
    ),
    labels: map(Type.String(), 'Map of string keys and values that can be used to organize and categorize (scope and select) objects.'),
    annotations: map(
      Type.String(),
      'Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata.',
    ),
    ownerReferences: list(
      OwnerReference,
      'List of objects depended by this object. If ALL objects in the list have been deleted, this object will be garbage collected.',
      {
        mergeKey: 'uid',
        strategy: 'merge',
        listType: 'map',
        mapKeys: ['uid'],
      },
    ),
    finalizers: list(
      Type.String(),
      'Must be empty before the object is deleted from the registry. Each entry is an identifier for the responsible component that will remove the entry from the list.',
      {
        strategy: 'merge',
        listType: 'set',
      },
    ),
    managedFields: list(ManagedFieldsEntry, 'ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow.', {
      listType: 'atomic',
    }),
  },
);

export const ListMeta = object(M + 'ListMeta', 'ListMeta describes metadata that synthetic resources must have, including lists and various status objects.', {
  selfLink: string('Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.'),
  resourceVersion: string(
    "String that identifies the server's internal version of this object that can be used by clients to determine when objects have changed.",
  ),
  continue: string('continue may be set if the user set a limit on the number of items returned, and indicates that the server has more data available.'),
  remainingItemCount: int64('remainingItemCount is the number of subsequent items in the list which are not included in this list response.'),
});

export const LabelSelectorRequirement = object(
  M + 'LabelSelectorRequirement',
  'A label selector requirement is a selector that contains values, a key, and an operator that relates the key and values.',
  {
    key: string('key is the label key that the selector applies to.'),
    operator: string("operator represents a key's relationship to a set of values. Valid operators are In, NotIn, Exists and DoesNotExist."),
    values: list(Type.String(), 'values is an array of string values. If the operator is In or NotIn, the values array must be non-empty.', {
      listType: 'atomic',
    }),
  },
  ['key', 'operator'],
);

export const LabelSelector = object(
  M + 'LabelSelector',
  'A label selector is a label query over a set of resources. The result of matchLabels and matchExpressions are ANDed. An empty label selector matches all objects. A null label selector matches no objects.',
  {
    matchLabels: map(Type.String(), 'matchLabels is a map of {key,value} pairs.'),
    matchExpressions: list(LabelSelectorRequirement, 'matchExpressions is a list of label selector requirements. The requirements are ANDed.', {
      listType: 'atomic',
    }),
  },
);

export const Condition = object(
  M + 'Condition',
  'Condition contains details for one aspect of the current state of this API Resource.',
  {
    type: string('type of condition in CamelCase or in foo.example.com/CamelCase.'),
    status: string('status of the condition, one of True, False, Unknown.'),
    observedGeneration: int64('observedGeneration represents the .metadata.generation that the condition was set based upon.'),
    lastTransitionTime: time('lastTransitionTime is the last time the condition transitioned from one status to another.'),
    reason: string("reason contains a programmatic identifier indicating the reason for the condition's last transition."),
    message: string('message is a human readable message indicating details about the transition.'),
  },
  ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
);

export const Preconditions = object(M + 'Preconditions', 'Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.', {
  uid: string('Specifies the target UID.'),
  resourceVersion: string('Specifies the target ResourceVersion'),
});

export const DeleteOptions = object(M + 'DeleteOptions', 'DeleteOptions may be provided when deleting an API object.', {
  apiVersion: string('APIVersion defines the versioned schema of this representation of an object.'),
  kind: string('Kind is a string value representing the REST resource this object represents.'),
  gracePeriodSeconds: int64(
    'The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately.',
  ),
  preconditions: Preconditions,
  orphanDependents: boolean('Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7.'),
  propagationPolicy: string("Whether and how garbage collection will be performed. Acceptable values are: 'Orphan', 'Background', 'Foreground'."),
  dryRun: list(
    Type.String(),
    'When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed',
    { listType: 'atomic' },
  ),
  ignoreStoreReadErrorWithClusterBreakingPotential: boolean(
    'if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error.',
  ),
});

export const StatusCause = object(
  M + 'StatusCause',
  'StatusCause provides more information about an api.Status failure, including cases when multiple errors are encountered.',
  {
    reason: string('A machine-readable description of the cause of the error.'),
    message: string('A human-readable description of the cause of the error.'),
    field: string('The field of the resource that has caused this error, as named by its JSON serialization.'),
  },
);

export const StatusDetails = object(
  M + 'StatusDetails',
  'StatusDetails is a set of additional properties that MAY be set by the server to provide additional information about a response.',
  {
    name: string('The name attribute of the resource associated with the status StatusReason (when there is a single name which can be described).'),
    group: string('The group attribute of the resource associated with the status StatusReason.'),
    kind: string('The kind attribute of the resource associated with the status StatusReason.'),
    uid: string('UID of the resource.'),
    causes: list(StatusCause, 'The Causes array includes more details associated with the StatusReason failure.', { listType: 'atomic' }),
    retryAfterSeconds: Type.Integer({ format: 'int32', description: 'If specified, the time in seconds before the operation should be retried.' }),
  },
);

export const Status = object(M + 'Status', "Status is a return value for calls that don't return other objects.", {
  apiVersion: string('APIVersion defines the versioned schema of this representation of an object.'),
  kind: string('Kind is a string value representing the REST resource this object represents.'),
  metadata: ListMeta,
  status: string('Status of the operation. One of: "Success" or "Failure".'),
  message: string('A human-readable description of the status of this operation.'),
  reason: string('A machine-readable description of why this operation is in the "Failure" status.'),
  details: StatusDetails,
  code: Type.Integer({ format: 'int32', description: 'Suggested HTTP return code for this status, 0 if not set.' }),
});

const API_VERSION_DOC =
  'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.';
const KIND_DOC =
  'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase.';

/** TypeMeta + `metadata: ObjectMeta` + the kind's own top-level fields. */
export function kindOf<P extends TProperties>(id: string, description: string, props: P) {
  return object(id, description, {
    apiVersion: string(API_VERSION_DOC),
    kind: string(KIND_DOC),
    metadata: ObjectMeta,
    ...props,
  });
}

export type ObjectMeta = Static<typeof ObjectMeta>;
export type OwnerReference = Static<typeof OwnerReference>;
export type ListMeta = Static<typeof ListMeta>;
export type LabelSelector = Static<typeof LabelSelector>;
export type LabelSelectorRequirement = Static<typeof LabelSelectorRequirement>;
export type DeleteOptions = Static<typeof DeleteOptions>;
export type ManagedFieldsEntry = Static<typeof ManagedFieldsEntry>;
export type Condition = Static<typeof Condition>;
