/**
 * How Go's encoding/json words what it refuses, for errors that quote it:
 * the kind of a decoded JSON value (`cannot unmarshal array into ...`) and the
 * text of common syntax errors, from what JSON.parse reports.
 */

/** `array`, `object`, `string`, `number`, `bool` or `null`, as UnmarshalTypeError names them. */
export const goJSONKind = (v: unknown): string =>
  Array.isArray(v)
    ? 'array'
    : v === null || v === undefined
      ? 'null'
      : typeof v === 'boolean'
        ? 'bool'
        : typeof v === 'object'
          ? 'object'
          : typeof v === 'number'
            ? 'number'
            : 'string';

/** Go's SyntaxError text for what JSON.parse refused in `text`, for the common cases; JavaScript's otherwise. */
export function goJSONSyntaxError(text: string, e: Error): string {
  const m = e.message;
  if (!text.trim() || /Unexpected end of JSON input|Unterminated string/i.test(m)) return 'unexpected end of JSON input';
  const tok = /Unexpected token '?(.)'?|Unexpected non-whitespace character|Bad control character/.exec(m);
  const pos = /position (\d+)/.exec(m);
  const ch = tok?.[1] ?? (pos ? text[Number(pos[1])] : undefined) ?? (/^\s*[^{["\-0-9tfn]/.test(text) ? text.trimStart()[0] : undefined);
  if (ch !== undefined) return `invalid character '${ch === "'" ? "\\'" : ch}' looking for beginning of value`;
  return m;
}
