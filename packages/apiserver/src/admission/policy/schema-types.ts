/**
 * CEL types of API objects, for type-checking policy expressions
 * (typechecking.go declType: SchemaDeclType of the kind's schema, as a
 * resource root). The conversion itself is the CEL engine's
 * (`schemaDeclType`); what is here is the schema it is given:
 *
 * - a custom resource's schema is the CRD's structural schema, as is;
 * - a built-in kind's schema is kubeling's TypeBox schema, made structural:
 *   TypeBox's `patternProperties` maps become `additionalProperties`, and the
 *   shapes upstream's OpenAPI types as int-or-string (IntOrString, and the
 *   Quantity union here) become `x-kubernetes-int-or-string` (dyn). Objects
 *   kubeling keeps open without describing them (`opaque`, a full schema
 *   upstream) are dyn too, so that expressions reading them get no false
 *   warning.
 */
import type { JSONSchemaProps } from '../../apiextensions/types.js';
import { type CelType, schemaDeclType } from './cel.js';

/** The parts of a TypeBox schema read here. */
export interface TypeBoxSchema {
  type?: string;
  format?: string;
  properties?: Record<string, TypeBoxSchema>;
  patternProperties?: Record<string, TypeBoxSchema>;
  additionalProperties?: TypeBoxSchema | boolean;
  items?: TypeBoxSchema;
  anyOf?: TypeBoxSchema[];
  required?: string[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
}

const DYN: JSONSchemaProps = { 'x-kubernetes-int-or-string': true };

/** A built-in kind's TypeBox schema as a structural schema. */
export function structuralOf(s: TypeBoxSchema): JSONSchemaProps {
  if (s['x-kubernetes-int-or-string'] || s.anyOf) return DYN;
  if (s.type === 'object' && s['x-kubernetes-preserve-unknown-fields'] && !s.properties) return DYN;
  const out: JSONSchemaProps = {};
  if (s.type) out.type = s.type;
  if (s.format) out.format = s.format;
  if (s.required) out.required = s.required;
  if (s.properties) out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, structuralOf(v)]));
  const extra = typeof s.additionalProperties === 'object' ? s.additionalProperties : Object.values(s.patternProperties ?? {})[0];
  if (extra) out.additionalProperties = structuralOf(extra);
  if (s.items) out.items = structuralOf(s.items);
  return out;
}

/** The CEL type of a resource's objects, or undefined when CEL cannot see it; `name` names its object types. */
export function resourceType(schema: JSONSchemaProps | undefined, name: string): CelType | undefined {
  return schemaDeclType(schema, true, name)?.cel;
}
