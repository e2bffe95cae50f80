/**
 * Every failure a v1 Status: the error handler, requests the HTTP parser or
 * the router refuse (malformed, headers over 1 MiB, bad escapes), and bodies
 * over the limit (413, read to the end so that the client sees the answer).
 * `statusErrors` installs the handlers on the root, for every route.
 */
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { StatusError, badRequest, internalError, notFoundPath, requestEntityTooLarge, unsupportedMediaType } from '@kubeling/apimachinery';
import { BODY_TYPES, PATCH_TYPES, encodeFor } from './codec.js';

export const MAX_HEADER_BYTES = 1 << 20;

/**
 * A request the HTTP parser refuses (malformed, or headers over the limit) is
 * answered with a v1 Status too, then the connection is closed — after a
 * moment, so that a client still sending reads the answer rather than a reset.
 */
export function clientErrorHandler(err: Error & { code?: string; reason?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const code = tooLarge ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: tooLarge ? 'Request Header Fields Too Large' : code === 408 ? 'Request Timeout' : `Bad Request: ${err.reason ?? err.message}`,
    ...(tooLarge ? {} : { reason: code === 408 ? 'Timeout' : 'BadRequest' }),
    code,
  };
  const body = JSON.stringify(status);
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${code} ${tooLarge ? 'Request Header Fields Too Large' : code === 408 ? 'Request Timeout' : 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.resume();
  setTimeout(() => socket.destroy(), 500).unref();
}

export function sendStatus(reply: FastifyReply, err: StatusError): FastifyReply {
  // A Status in the client's encoding (protobuf too), with the error's HTTP code.
  const { payload, contentType } = encodeFor(err.status, reply.request.headers.accept);
  if (err.status.details?.retryAfterSeconds) reply.header('Retry-After', String(err.status.details.retryAfterSeconds));
  return reply.code(err.status.code).type(contentType).send(payload);
}

/** Paths the router cannot take apart: a bad escape is 400, a segment longer than any name 404. */
export function frameworkErrors(err: FastifyError, _req: FastifyRequest, reply: FastifyReply) {
  const code = (err as { code?: string }).code;
  return sendStatus(
    reply,
    code === 'FST_ERR_MAX_PARAM_LENGTH' ? notFoundPath() : badRequest(code === 'FST_ERR_BAD_URL' ? `invalid URL: ${err.message}` : err.message),
  );
}

/** Errors as Statuses; anything not a StatusError is a bug: logged, and answered 500 without its text. */
export function errorHandler(maxBody: number) {
  return (err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof StatusError) return sendStatus(reply, err);
    const e = err as { statusCode?: number; code?: string; message?: string };
    if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || e.statusCode === 413) return sendStatus(reply, requestEntityTooLarge(maxBody));
    if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || e.statusCode === 415)
      return sendStatus(reply, unsupportedMediaType('', [...BODY_TYPES, ...PATCH_TYPES]));
    if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) return sendStatus(reply, badRequest(e.message ?? 'bad request'));
    req.log.error({ err }, 'internal error');
    return sendStatus(reply, internalError());
  };
}

/**
 * Bodies are read whole as buffers (the handlers decode them, so every error
 * is a Status). One over `maxBody` is 413 at once; the rest of it is read and
 * dropped (up to a bound) so that the connection lives on and a client still
 * sending reads the answer instead of a broken pipe. (A parser error would make
 * fastify close the connection, so the parser hands on a marker the 413 is
 * made of.)
 */
export function limitBodies(app: FastifyInstance, maxBody: number): void {
  app.removeAllContentTypeParsers();
  const drainLimit = 4 * maxBody;
  const TOO_LARGE = Symbol('request body too large');
  app.addContentTypeParser('*', (_req, payload, done) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    const refuse = () => {
      refused = true;
      chunks.length = 0;
      done(null, TOO_LARGE);
    };
    if (Number(payload.headers['content-length']) > maxBody) refuse();
    payload.on('data', (d: Buffer) => {
      size += d.length;
      if (refused) {
        if (size > drainLimit) payload.destroy();
        return;
      }
      if (size > maxBody) return refuse();
      chunks.push(d);
    });
    payload.on('end', () => {
      if (!refused) done(null, Buffer.concat(chunks));
    });
    payload.on('error', (err) => {
      if (!refused) {
        refused = true;
        done(err, undefined);
      }
    });
  });
  app.addHook('preValidation', async (req) => {
    if (req.body === TOO_LARGE) throw requestEntityTooLarge(maxBody);
  });
}

/** The error and 404 handlers and the body limit, for every route (a root plugin). */
export const statusErrors = fp<{ maxBody: number }>(
  async (app, { maxBody }) => {
    limitBodies(app, maxBody);
    app.setErrorHandler(errorHandler(maxBody));
    app.setNotFoundHandler((_req, reply) => sendStatus(reply, notFoundPath()));
  },
  { name: 'kubeling-status-errors' },
);
