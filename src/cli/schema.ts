/**
 * JSON Schema from a definition, for MCP `inputSchema`, OpenAI `parameters` and Anthropic
 * `input_schema`. Written by hand from the same table zod is built from (`validate.ts`), so
 * manifests never load zod; tests/cli/surfaces.test.ts checks the two agree.
 */
import { isRequired, surfaceParams } from './define.js';
import type { AnyTool, FieldSpec, ParamDef, ValueSpec } from './types.js';

/** A JSON Schema object (the subset we emit). */
export type JsonSchema = { [k: string]: unknown };

function valueSchema(s: ValueSpec): JsonSchema {
  switch (s.type) {
    case 'string':
      // JSON Schema counts characters; a string over maxBytes characters is surely over maxBytes bytes
      return s.maxBytes === undefined ? { type: 'string' } : { type: 'string', maxLength: s.maxBytes };
    case 'boolean':
      return { type: s.type };
    case 'number':
      return {
        type: s.integer ? 'integer' : 'number',
        ...(s.min !== undefined ? { minimum: s.min } : {}),
        ...(s.max !== undefined ? { maximum: s.max } : {}),
      };
    case 'enum':
      return { type: 'string', enum: [...s.values] };
    case 'array':
      return {
        type: 'array',
        items: valueSchema(s.items),
        ...(s.maxItems !== undefined ? { maxItems: s.maxItems } : {}),
      };
    case 'object': {
      if (!s.properties) return { type: 'object' };
      const props = Object.entries(s.properties);
      return {
        type: 'object',
        properties: Object.fromEntries(props.map(([k, f]) => [k, fieldSchema(f)])),
        required: props.filter(([, f]) => !f.optional).map(([k]) => k),
      };
    }
  }
}

function fieldSchema(f: FieldSpec): JsonSchema {
  return { ...valueSchema(f), ...(f.describe ? { description: f.describe } : {}) };
}

function paramSchema(p: ParamDef): JsonSchema {
  return {
    ...valueSchema(p),
    description: p.describe,
    ...(p.default !== undefined ? { default: p.default } : {}),
  };
}

/** The input schema of one surface: an object with no additional properties. */
export function jsonSchema(def: AnyTool, surface: 'cli' | 'gadget'): JsonSchema {
  const params = surfaceParams(def, surface);
  return {
    type: 'object',
    properties: Object.fromEntries(params.map(([k, p]) => [k, paramSchema(p)])),
    required: params.filter(([, p]) => isRequired(p)).map(([k]) => k),
    additionalProperties: false,
  };
}
