/**
 * The error every failed request throws: the API's Status, as the server sent
 * it. Declared here so that the package's types stand alone; the class is the
 * one the client throws, so `instanceof` holds.
 */
import { StatusError as Thrown } from '@kubeling/apimachinery';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** meta/v1 Status. */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { resourceVersion?: string };
  status: 'Success' | 'Failure';
  message?: string;
  /** `NotFound`, `AlreadyExists`, `Conflict`, `Invalid`, `Forbidden`, … */
  reason?: string;
  details?: { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[]; retryAfterSeconds?: number };
  code: number;
}

export interface StatusError extends Error {
  readonly status: Status;
  /** The HTTP status code. */
  readonly code: number;
  readonly reason: string | undefined;
}

export const StatusError: { new (status: Status): StatusError; readonly prototype: StatusError } = Thrown as never;
