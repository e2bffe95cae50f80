/**
 * How Go prints the values that end up inside apiextensions' field errors.
 *
 * kube-apiserver's `(*field.Error).ErrorBody()` prints strings quoted,
 * int64/float64/bool bare, and anything else with `%#v`. The bad values the
 * CRD machinery reports are often decoded JSON (`map[string]interface {}`,
 * `[]interface {}`) or internal apiextensions structs (the versions list, a
 * schema node), so this module renders those the way `fmt.Sprintf("%#v")`
 * does (map keys sorted, `interface {}(nil)` for nested nulls). Pointers
 * print as Go prints them, with a stand-in address, since the real one is
 * random per process anyway.
 */
import { field } from '@kubeling/apimachinery';
import type { CustomResourceDefinitionVersion, JSONSchemaProps } from '../types.js';

const { GoValue, goQuote, goFloat } = field;
type GoValueT = InstanceType<typeof GoValue>;

/** A stand-in for the address Go prints for a non-nil pointer in `%#v`. */
const ADDR = '0xc000000000';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `%#v` of a number held in an interface (int64 or float64 after JSON decoding). */
const goNumber = (n: number): string => (Number.isInteger(n) && Math.abs(n) < 1e21 ? String(n) : goFloat(n));

/** `%#v` of a decoded JSON value as it sits inside an `interface{}`. */
export function goSharpV(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSharpV).join(', ')}}`;
  if (isObject(v)) {
    const keys = Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort();
    return `map[string]interface {}{${keys.map((k) => `${goQuote(k)}:${goSharpV(v[k])}`).join(', ')}}`;
  }
  return String(v);
}

/**
 * A bad value the way ErrorBody prints a decoded JSON value: strings, numbers
 * and booleans as themselves (the field-error renderer quotes/prints them),
 * maps and lists wrapped so they print with `%#v`.
 */
export function jsonBadValue(v: unknown): unknown {
  if (v === null || v === undefined || typeof v !== 'object') return v ?? null;
  return new GoValue(goSharpV(v));
}

// ---- internal apiextensions structs ------------------------------------------

const ptr = (type: string, set: boolean): string => (set ? `(*${type})(${ADDR})` : `(*${type})(nil)`);
const str = (s: string | undefined): string => goQuote(s ?? '');
const bool = (b: boolean | undefined): string => String(b === true);
const strSlice = (a: readonly string[] | undefined, type = '[]string'): string =>
  a === undefined ? `${type}(nil)` : `${type}{${a.map((s) => goQuote(s)).join(', ')}}`;

const SCHEMA = 'apiextensions.JSONSchemaProps';

function schemaMap(m: Record<string, JSONSchemaProps> | undefined, type: string): string {
  if (m === undefined) return `${type}(nil)`;
  const keys = Object.keys(m).sort();
  return `${type}{${keys.map((k) => `${goQuote(k)}:${goSchemaStruct(m[k]!)}`).join(', ')}}`;
}

const schemaSlice = (a: readonly JSONSchemaProps[] | undefined): string =>
  a === undefined ? `[]${SCHEMA}(nil)` : `[]${SCHEMA}{${a.map(goSchemaStruct).join(', ')}}`;

/** `%#v` of an internal `apiextensions.JSONSchemaProps`, fields in the struct's order. */
export function goSchemaStruct(s: JSONSchemaProps): string {
  const f: [string, string][] = [
    ['ID', str(s.id)],
    ['Schema', str(s.$schema)],
    ['Ref', ptr('string', s.$ref !== undefined)],
    ['Description', str(s.description)],
    ['Type', str(s.type)],
    ['Nullable', bool(s.nullable)],
    ['Format', str(s.format)],
    ['Title', str(s.title)],
    ['Default', ptr('apiextensions.JSON', s.default !== undefined && s.default !== null)],
    ['Maximum', ptr('float64', s.maximum !== undefined)],
    ['ExclusiveMaximum', bool(s.exclusiveMaximum)],
    ['Minimum', ptr('float64', s.minimum !== undefined)],
    ['ExclusiveMinimum', bool(s.exclusiveMinimum)],
    ['MaxLength', ptr('int64', s.maxLength !== undefined)],
    ['MinLength', ptr('int64', s.minLength !== undefined)],
    ['Pattern', str(s.pattern)],
    ['MaxItems', ptr('int64', s.maxItems !== undefined)],
    ['MinItems', ptr('int64', s.minItems !== undefined)],
    ['UniqueItems', bool(s.uniqueItems)],
    ['MultipleOf', ptr('float64', s.multipleOf !== undefined)],
    ['Enum', s.enum === undefined ? '[]apiextensions.JSON(nil)' : `[]apiextensions.JSON{${s.enum.map(goSharpV).join(', ')}}`],
    ['MaxProperties', ptr('int64', s.maxProperties !== undefined)],
    ['MinProperties', ptr('int64', s.minProperties !== undefined)],
    ['Required', strSlice(s.required)],
    ['Items', ptr('apiextensions.JSONSchemaPropsOrArray', s.items !== undefined)],
    ['AllOf', schemaSlice(s.allOf)],
    ['OneOf', schemaSlice(s.oneOf)],
    ['AnyOf', schemaSlice(s.anyOf)],
    ['Not', ptr(SCHEMA, s.not !== undefined)],
    ['Properties', schemaMap(s.properties, `map[string]${SCHEMA}`)],
    ['AdditionalProperties', ptr('apiextensions.JSONSchemaPropsOrBool', s.additionalProperties !== undefined)],
    ['PatternProperties', schemaMap(s.patternProperties, `map[string]${SCHEMA}`)],
    ['Dependencies', s.dependencies === undefined ? 'apiextensions.JSONSchemaDependencies(nil)' : 'apiextensions.JSONSchemaDependencies{}'],
    ['AdditionalItems', ptr('apiextensions.JSONSchemaPropsOrBool', s.additionalItems !== undefined)],
    ['Definitions', schemaMap(s.definitions, 'apiextensions.JSONSchemaDefinitions')],
    ['ExternalDocs', ptr('apiextensions.ExternalDocumentation', s.externalDocs !== undefined)],
    ['Example', ptr('apiextensions.JSON', s.example !== undefined && s.example !== null)],
    ['XPreserveUnknownFields', ptr('bool', s['x-kubernetes-preserve-unknown-fields'] !== undefined)],
    ['XEmbeddedResource', bool(s['x-kubernetes-embedded-resource'])],
    ['XIntOrString', bool(s['x-kubernetes-int-or-string'])],
    ['XListMapKeys', strSlice(s['x-kubernetes-list-map-keys'])],
    ['XListType', ptr('string', s['x-kubernetes-list-type'] !== undefined)],
    ['XMapType', ptr('string', s['x-kubernetes-map-type'] !== undefined)],
    ['XValidations', s['x-kubernetes-validations'] === undefined ? 'apiextensions.ValidationRules(nil)' : 'apiextensions.ValidationRules{}'],
  ];
  return `${SCHEMA}{${f.map(([k, v]) => `${k}:${v}`).join(', ')}}`;
}

/** A schema node as a bad value (`%#v` of the struct). */
export const schemaBadValue = (s: JSONSchemaProps): GoValueT => new GoValue(goSchemaStruct(s));

/**
 * `%#v` of the internal `[]apiextensions.CustomResourceDefinitionVersion`.
 * Per-version schema, subresources, columns and selectable fields are nil when
 * the v1 → internal conversion hoisted them to the spec (all versions equal).
 */
export function goVersions(
  versions: readonly CustomResourceDefinitionVersion[],
  hoisted: { schema: boolean; subresources: boolean; columns: boolean },
): GoValueT {
  const T = 'apiextensions.CustomResourceDefinitionVersion';
  const one = (v: CustomResourceDefinitionVersion): string => {
    const cols = hoisted.columns ? undefined : v.additionalPrinterColumns;
    const sel = hoisted.schema ? undefined : v.selectableFields;
    const f: [string, string][] = [
      ['Name', str(v.name)],
      ['Served', bool(v.served)],
      ['Storage', bool(v.storage)],
      ['Deprecated', bool(v.deprecated)],
      ['DeprecationWarning', ptr('string', v.deprecationWarning !== undefined)],
      ['Schema', ptr('apiextensions.CustomResourceValidation', !hoisted.schema && v.schema !== undefined)],
      ['Subresources', ptr('apiextensions.CustomResourceSubresources', !hoisted.subresources && v.subresources !== undefined)],
      [
        'AdditionalPrinterColumns',
        cols === undefined
          ? '[]apiextensions.CustomResourceColumnDefinition(nil)'
          : `[]apiextensions.CustomResourceColumnDefinition{${cols
              .map(
                (c) =>
                  `apiextensions.CustomResourceColumnDefinition{Name:${str(c.name)}, Type:${str(c.type)}, Format:${str(c.format)}, Description:${str(c.description)}, Priority:${c.priority ?? 0}, JSONPath:${str(c.jsonPath)}}`,
              )
              .join(', ')}}`,
      ],
      [
        'SelectableFields',
        sel === undefined
          ? '[]apiextensions.SelectableField(nil)'
          : `[]apiextensions.SelectableField{${sel.map((s) => `apiextensions.SelectableField{JSONPath:${str(s.jsonPath)}}`).join(', ')}}`,
      ],
    ];
    return `${T}{${f.map(([k, val]) => `${k}:${val}`).join(', ')}}`;
  };
  return new GoValue(versions === undefined ? `[]${T}(nil)` : `[]${T}{${versions.map(one).join(', ')}}`);
}
