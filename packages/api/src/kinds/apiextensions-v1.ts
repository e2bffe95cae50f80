/**
 * apiextensions.k8s.io/v1: CustomResourceDefinition, as upstream Kubernetes
 * 1.33 (`k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1`). The
 * OpenAPI schema inside a version (JSONSchemaProps) is recursive and is read
 * by the CRD machinery itself: here it is described at its root and kept whole.
 */
import { Type } from '@sinclair/typebox';
import { boolean, bytes, described, enumString, int32, list, object, opaque, string, time, type Static } from '../schema/dsl.js';
import { kindOf } from '../schema/meta.js';

const X = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.';

export const JSONSchemaProps = opaque('JSONSchemaProps is a JSON-Schema following Specification Draft 4 (http://json-schema.org/).');

export const ServiceReference = object(
  X + 'ServiceReference',
  'ServiceReference holds a reference to Service.legacy.k8s.io',
  {
    namespace: string('namespace is the namespace of the service. Required'),
    name: string('name is the name of the service. Required'),
    path: string('path is an optional URL path at which the webhook will be contacted.'),
    port: int32(
      'port is an optional service port at which the webhook will be contacted. `port` should be a valid port number (1-65535, inclusive). Defaults to 443 for backward compatibility.',
    ),
  },
  ['namespace', 'name'],
);

export const WebhookClientConfig = object(
  X + 'WebhookClientConfig',
  'WebhookClientConfig contains the information to make a TLS connection with the webhook.',
  {
    url: string(
      'url gives the location of the webhook, in standard URL form (`scheme://host:port/path`). Exactly one of `url` or `service` must be specified.',
    ),
    service: described(ServiceReference, 'service is a reference to the service for this webhook. Either service or url must be specified.'),
    caBundle: bytes(
      "caBundle is a PEM encoded CA bundle which will be used to validate the webhook's server certificate. If unspecified, system trust roots on the apiserver are used.",
    ),
  },
);

export const WebhookConversion = object(
  X + 'WebhookConversion',
  'WebhookConversion describes how to call a conversion webhook',
  {
    clientConfig: described(WebhookClientConfig, 'clientConfig is the instructions for how to call the webhook if strategy is `Webhook`.'),
    conversionReviewVersions: list(
      Type.String(),
      'conversionReviewVersions is an ordered list of preferred `ConversionReview` versions the Webhook expects. The API server will use the first version in the list which it supports.',
      { listType: 'atomic' },
    ),
  },
  ['conversionReviewVersions'],
);

export const CustomResourceConversion = object(
  X + 'CustomResourceConversion',
  'CustomResourceConversion describes how to convert different versions of a CR.',
  {
    strategy: enumString(
      ['None', 'Webhook'],
      'strategy specifies how custom resources are converted between versions. Allowed values are: - `"None"`: The converter only change the apiVersion and would not touch any other field in the custom resource. - `"Webhook"`: API Server will call to an external webhook to do the conversion.',
    ),
    webhook: described(WebhookConversion, 'webhook describes how to call the conversion webhook. Required when `strategy` is set to `"Webhook"`.'),
  },
  ['strategy'],
);

export const CustomResourceDefinitionNames = object(
  X + 'CustomResourceDefinitionNames',
  'CustomResourceDefinitionNames indicates the names to serve this CustomResourceDefinition',
  {
    plural: string(
      'plural is the plural name of the resource to serve. The custom resources are served under `/apis/<group>/<version>/.../<plural>`. Must match the name of the CustomResourceDefinition (in the form `<names.plural>.<group>`). Must be all lowercase.',
    ),
    singular: string('singular is the singular name of the resource. It must be all lowercase. Defaults to lowercased `kind`.'),
    shortNames: list(
      Type.String(),
      'shortNames are short names for the resource, exposed in API discovery documents, and used by clients to support invocations like `kubectl get <shortname>`. It must be all lowercase.',
      { listType: 'atomic' },
    ),
    kind: string(
      'kind is the serialized kind of the resource. It is normally CamelCase and singular. Custom resource instances will use this value as the `kind` attribute in API calls.',
    ),
    listKind: string('listKind is the serialized kind of the list for this resource. Defaults to "`kind`List".'),
    categories: list(
      Type.String(),
      "categories is a list of grouped resources this custom resource belongs to (e.g. 'all'). This is published in API discovery documents, and used by clients to support invocations like `kubectl get all`.",
      { listType: 'atomic' },
    ),
  },
  ['plural', 'kind'],
);

export const CustomResourceColumnDefinition = object(
  X + 'CustomResourceColumnDefinition',
  'CustomResourceColumnDefinition specifies a column for server side printing.',
  {
    name: string('name is a human readable name for the column.'),
    type: string(
      'type is an OpenAPI type definition for this column. See https://github.com/OAI/OpenAPI-Specification/blob/master/versions/2.0.md#data-types for details.',
    ),
    format: string(
      "format is an optional OpenAPI type definition for this column. The 'name' format is applied to the primary identifier column to assist in clients identifying column is the resource name. See https://github.com/OAI/OpenAPI-Specification/blob/master/versions/2.0.md#data-types for details.",
    ),
    description: string('description is a human readable description of this column.'),
    priority: int32(
      'priority is an integer defining the relative importance of this column compared to others. Lower numbers are considered higher priority. Columns that may be omitted in limited space scenarios should be given a priority greater than 0.',
    ),
    jsonPath: string(
      'jsonPath is a simple JSON path (i.e. with array notation) which is evaluated against each custom resource to produce the value for this column.',
    ),
  },
  ['name', 'type', 'jsonPath'],
);

export const CustomResourceSubresourceScale = object(
  X + 'CustomResourceSubresourceScale',
  'CustomResourceSubresourceScale defines how to serve the scale subresource for CustomResources.',
  {
    specReplicasPath: string(
      'specReplicasPath defines the JSON path inside of a custom resource that corresponds to Scale `spec.replicas`. Only JSON paths without the array notation are allowed. Must be a JSON Path under `.spec`. If there is no value under the given path in the custom resource, the `/scale` subresource will return an error on GET.',
    ),
    statusReplicasPath: string(
      'statusReplicasPath defines the JSON path inside of a custom resource that corresponds to Scale `status.replicas`. Only JSON paths without the array notation are allowed. Must be a JSON Path under `.status`. If there is no value under the given path in the custom resource, the `status.replicas` value in the `/scale` subresource will default to 0.',
    ),
    labelSelectorPath: string(
      'labelSelectorPath defines the JSON path inside of a custom resource that corresponds to Scale `status.selector`. Only JSON paths without the array notation are allowed. Must be a JSON Path under `.status` or `.spec`. Must be set to work with HorizontalPodAutoscaler.',
    ),
  },
  ['specReplicasPath', 'statusReplicasPath'],
);

export const CustomResourceSubresources = object(
  X + 'CustomResourceSubresources',
  'CustomResourceSubresources defines the status and scale subresources for CustomResources.',
  {
    status: opaque(
      'status indicates the custom resource should serve a `/status` subresource. When enabled: 1. requests to the custom resource primary endpoint ignore changes to the `status` stanza of the object. 2. requests to the custom resource `/status` subresource ignore changes to anything other than the `status` stanza of the object.',
    ),
    scale: described(
      CustomResourceSubresourceScale,
      'scale indicates the custom resource should serve a `/scale` subresource that returns an `autoscaling/v1` Scale object.',
    ),
  },
);

export const CustomResourceValidation = object(
  X + 'CustomResourceValidation',
  'CustomResourceValidation is a list of validation methods for CustomResources.',
  {
    openAPIV3Schema: described(JSONSchemaProps, 'openAPIV3Schema is the OpenAPI v3 schema to use for validation and pruning.'),
  },
);

export const SelectableField = object(
  X + 'SelectableField',
  'SelectableField specifies the JSON path of a field that may be used with field selectors.',
  {
    jsonPath: string(
      'jsonPath is a simple JSON path which is evaluated against each custom resource to produce a field selector value. Only JSON paths without the array notation are allowed. Must point to a field of type string, boolean or integer.',
    ),
  },
  ['jsonPath'],
);

export const CustomResourceDefinitionVersion = object(
  X + 'CustomResourceDefinitionVersion',
  'CustomResourceDefinitionVersion describes a version for CRD.',
  {
    name: string(
      'name is the version name, e.g. “v1”, “v2beta1”, etc. The custom resources are served under this version at `/apis/<group>/<version>/...` if `served` is true.',
    ),
    served: boolean('served is a flag enabling/disabling this version from being served via REST APIs'),
    storage: boolean(
      'storage indicates this version should be used when persisting custom resources to storage. There must be exactly one version with storage=true.',
    ),
    deprecated: boolean(
      'deprecated indicates this version of the custom resource API is deprecated. When set to true, API requests to this version receive a warning header in the server response. Defaults to false.',
    ),
    deprecationWarning: string(
      'deprecationWarning overrides the default warning returned to API clients. May only be set when `deprecated` is true. The default warning indicates this version is deprecated and recommends use of the newest served version of equal or greater stability, if one exists.',
    ),
    schema: described(
      CustomResourceValidation,
      'schema describes the schema used for validation, pruning, and defaulting of this version of the custom resource.',
    ),
    subresources: described(CustomResourceSubresources, 'subresources specify what subresources this version of the defined custom resource have.'),
    additionalPrinterColumns: list(
      CustomResourceColumnDefinition,
      'additionalPrinterColumns specifies additional columns returned in Table output. If no columns are specified, a single column displaying the age of the custom resource is used.',
      { listType: 'atomic' },
    ),
    selectableFields: list(
      SelectableField,
      'selectableFields specifies paths to fields that may be used as field selectors. A maximum of 8 selectable fields are allowed.',
      { listType: 'atomic' },
    ),
  },
  ['name', 'served', 'storage'],
);

export const CustomResourceDefinitionSpec = object(
  X + 'CustomResourceDefinitionSpec',
  'CustomResourceDefinitionSpec describes how a user wants their resource to appear',
  {
    group: string(
      'group is the API group of the defined custom resource. The custom resources are served under `/apis/<group>/...`. Must match the name of the CustomResourceDefinition (in the form `<names.plural>.<group>`).',
    ),
    names: described(CustomResourceDefinitionNames, 'names specify the resource and kind names for the custom resource.'),
    scope: string('scope indicates whether the defined custom resource is cluster- or namespace-scoped. Allowed values are `Cluster` and `Namespaced`.'),
    versions: list(
      CustomResourceDefinitionVersion,
      'versions is the list of all API versions of the defined custom resource. Version names are used to compute the order in which served versions are listed in API discovery.',
      { listType: 'atomic' },
    ),
    conversion: described(CustomResourceConversion, 'conversion defines conversion settings for the CRD.'),
    preserveUnknownFields: boolean(
      'preserveUnknownFields indicates that object fields which are not specified in the OpenAPI schema should be preserved when persisting to storage. apiVersion, kind, metadata and known fields inside metadata are always preserved. This field is deprecated in favor of setting `x-preserve-unknown-fields` to true in `spec.versions[*].schema.openAPIV3Schema`.',
    ),
  },
  ['group', 'names', 'scope', 'versions'],
);

export const CustomResourceDefinitionCondition = object(
  X + 'CustomResourceDefinitionCondition',
  'CustomResourceDefinitionCondition contains details for the current condition of this pod.',
  {
    type: string('type is the type of the condition. Types include Established, NamesAccepted and Terminating.'),
    status: string('status is the status of the condition. Can be True, False, Unknown.'),
    observedGeneration: Type.Integer({
      format: 'int64',
      description: 'observedGeneration represents the .metadata.generation that the condition was set based upon.',
    }),
    lastTransitionTime: time('lastTransitionTime last time the condition transitioned from one status to another.'),
    reason: string("reason is a unique, one-word, CamelCase reason for the condition's last transition."),
    message: string('message is a human-readable message indicating details about last transition.'),
  },
  ['type', 'status'],
);

export const CustomResourceDefinitionStatus = object(
  X + 'CustomResourceDefinitionStatus',
  'CustomResourceDefinitionStatus indicates the state of the CustomResourceDefinition',
  {
    conditions: list(CustomResourceDefinitionCondition, 'conditions indicate state for particular aspects of a CustomResourceDefinition', {
      listType: 'map',
      mapKeys: ['type'],
    }),
    acceptedNames: described(
      CustomResourceDefinitionNames,
      'acceptedNames are the names that are actually being used to serve discovery. They may be different than the names in spec.',
    ),
    storedVersions: list(
      Type.String(),
      'storedVersions lists all versions of CustomResources that were ever persisted. Tracking these versions allows a migration path for stored versions in etcd.',
      { listType: 'atomic' },
    ),
  },
);

export const CustomResourceDefinition = kindOf(
  X + 'CustomResourceDefinition',
  'CustomResourceDefinition represents a resource that should be exposed on the API server.  Its name MUST be in the format <.spec.name>.<.spec.group>.',
  {
    spec: described(CustomResourceDefinitionSpec, 'spec describes how the user wants the resources to appear'),
    status: described(CustomResourceDefinitionStatus, 'status indicates the actual state of the CustomResourceDefinition'),
  },
);

export type CustomResourceDefinition = Static<typeof CustomResourceDefinition>;
