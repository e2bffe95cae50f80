export * from './errors.js';
export * from './util.js';
export * from './labels.js';
export * from './fields.js';
export * from './validation.js';
export * as field from './field-errors.js';
export { type FieldError, type FieldErrorType, Path, aggregateMessage, fieldErrorBody, fieldErrorMessage, fieldErrorReason } from './field-errors.js';
export * from './patch/index.js';
export * from './quantity.js';
