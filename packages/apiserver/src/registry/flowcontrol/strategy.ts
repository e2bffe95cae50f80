/**
 * Strategies of FlowSchema and PriorityLevelConfiguration (kubernetes
 * pkg/registry/flowcontrol/flowschema/strategy.go and
 * prioritylevelconfiguration/strategy.go): cluster-scoped, generation bumped
 * on spec changes, status written only through the status subresource (and
 * cleared on create), v1 defaulting, and the validation of validation.ts.
 */
import type { KubeObject } from '@kubeling/api';
import type { Strategy } from '../strategy.js';
import { defaultFlowSchema, defaultPriorityLevel } from './defaults.js';
import { validateFlowSchema, validateFlowSchemaStatus, validatePriorityLevel, validatePriorityLevelStatus } from './validation.js';

const clearStatus = (obj: KubeObject) => {
  obj.status = {};
};

export const flowSchemaStrategy: Strategy = {
  generation: true,
  statusSubresource: true,
  defaults: defaultFlowSchema,
  prepareForCreate: clearStatus,
  validate: (obj) => validateFlowSchema(obj),
  validateStatusUpdate: (obj) => validateFlowSchemaStatus(obj),
};

export const priorityLevelConfigurationStrategy: Strategy = {
  generation: true,
  statusSubresource: true,
  defaults: defaultPriorityLevel,
  prepareForCreate: clearStatus,
  validate: (obj) => validatePriorityLevel(obj),
  validateStatusUpdate: (obj) => validatePriorityLevelStatus(obj),
};
