/**
 * API errors as Kubernetes speaks them: every failure is a `v1 Status` with the
 * upstream reason, HTTP code and message format (k8s.io/apimachinery
 * pkg/api/errors/errors.go). kubectl and client libraries match on `reason`,
 * so both 409s (AlreadyExists, Conflict) and both 410s (Expired, Gone) exist.
 *
 * `StatusError` is what every layer throws; one boundary in the apiserver turns it
 * into the response body. Anything that is not a `StatusError` is a bug and
 * becomes `500 InternalError` without leaking its text.
 */

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'Invalid'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout'
  | 'ServerTimeout';

/** HTTP code of each reason; a reason missing here is a compile error. */
export const codeForReason: Record<StatusReason, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  AlreadyExists: 409,
  Conflict: 409,
  Gone: 410,
  Expired: 410,
  RequestEntityTooLarge: 413,
  UnsupportedMediaType: 415,
  Invalid: 422,
  TooManyRequests: 429,
  InternalError: 500,
  ServiceUnavailable: 503,
  Timeout: 504,
  ServerTimeout: 504,
};

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, unknown>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: StatusReason | string;
  details?: StatusDetails;
  code: number;
}

export interface GroupResource {
  group: string;
  resource: string;
}

export interface GroupKind {
  group: string;
  kind: string;
}

export class StatusError extends Error {
  constructor(readonly status: Status) {
    super(status.message ?? status.reason ?? 'unknown error');
    this.name = 'StatusError';
  }
  get code(): number {
    return this.status.code;
  }
  get reason(): string | undefined {
    return this.status.reason;
  }
}

export function failure(reason: StatusReason, message: string, details?: StatusDetails): StatusError {
  const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code: codeForReason[reason] };
  if (details) s.details = details;
  return new StatusError(s);
}

export function successStatus(details?: StatusDetails): Status {
  const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 };
  if (details) s.details = details;
  return s;
}

/** `deployments.apps` / `pods` as upstream prints a GroupResource. */
export const grString = (gr: GroupResource): string => (gr.group ? `${gr.resource}.${gr.group}` : gr.resource);
/** `Deployment.apps` / `Pod` as upstream prints a GroupKind. */
export const gkString = (gk: GroupKind): string => (gk.group ? `${gk.kind}.${gk.group}` : gk.kind);

const grDetails = (gr: GroupResource, name: string): StatusDetails => ({
  name,
  ...(gr.group ? { group: gr.group } : {}),
  kind: gr.resource,
});

export const notFound = (gr: GroupResource, name: string) => failure('NotFound', `${grString(gr)} "${name}" not found`, grDetails(gr, name));

export const alreadyExists = (gr: GroupResource, name: string) => failure('AlreadyExists', `${grString(gr)} "${name}" already exists`, grDetails(gr, name));

export const conflict = (gr: GroupResource, name: string, why: string) =>
  failure('Conflict', `Operation cannot be fulfilled on ${grString(gr)} "${name}": ${why}`, grDetails(gr, name));

export const OPTIMISTIC_LOCK_MESSAGE = 'the object has been modified; please apply your changes to the latest version and try again';

export const invalid = (gk: GroupKind, name: string, causes: StatusCause[], aggregate: string) =>
  failure('Invalid', `${gkString(gk)} "${name}" is invalid: ${aggregate}`, {
    name,
    ...(gk.group ? { group: gk.group } : {}),
    kind: gk.kind,
    causes,
  });

export const badRequest = (message: string) => failure('BadRequest', message);

export const forbidden = (gr: GroupResource, name: string, why: string) =>
  failure('Forbidden', `${name ? `${grString(gr)} "${name}"` : grString(gr)} is forbidden: ${why}`, grDetails(gr, name));

export const methodNotAllowed = () => failure('MethodNotAllowed', 'the server does not allow this method on the requested resource');

export const notFoundPath = () => failure('NotFound', 'the server could not find the requested resource');

export const unsupportedMediaType = (contentType: string, accepted: string[]) =>
  failure(
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    contentType ? {} : undefined,
  );

export const notAcceptable = (accepted: string[]) => failure('NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`);

/** 413 for a body over the limit (`Request entity too large: limit is 3145728`), or with a message of its own. */
export const requestEntityTooLarge = (limit: number | string) =>
  failure('RequestEntityTooLarge', `Request entity too large: ${typeof limit === 'number' ? `limit is ${limit}` : limit}`);

/** 410 for a resourceVersion that has been compacted away (`too old resource version: 5 (1000)`). */
export const tooOldResourceVersion = (requested: number, oldest: number) => failure('Expired', `too old resource version: ${requested} (${oldest})`);

export const expired = (message: string) => failure('Expired', message);

export const tooManyRequests = (message: string, retryAfterSeconds: number) => failure('TooManyRequests', message, { retryAfterSeconds });

export const internalError = (message = 'an error on the server has prevented the request from succeeding') =>
  failure('InternalError', `Internal error occurred: ${message}`);

export const serviceUnavailable = (message: string) => failure('ServiceUnavailable', message);

export const timeoutError = (message: string, retryAfterSeconds = 1) => failure('Timeout', message, { retryAfterSeconds });

/**
 * 504 for a resourceVersion the store has not reached (storage.NewTooLargeResourceVersionError):
 * `Timeout: Too large resource version: 99, current: 12`, retry after a second.
 */
export const tooLargeResourceVersion = (requested: string | number | bigint, current: number) =>
  failure('Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });

export const isStatusError = (e: unknown): e is StatusError => e instanceof StatusError;
export const isNotFound = (e: unknown) => isStatusError(e) && e.status.reason === 'NotFound';
export const isAlreadyExists = (e: unknown) => isStatusError(e) && e.status.reason === 'AlreadyExists';
export const isConflict = (e: unknown) => isStatusError(e) && e.status.reason === 'Conflict';
export const isInvalid = (e: unknown) => isStatusError(e) && e.status.reason === 'Invalid';
export const isExpired = (e: unknown) => isStatusError(e) && (e.status.reason === 'Expired' || e.status.reason === 'Gone');
