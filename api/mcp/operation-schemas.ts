import { z } from 'zod';
import { openApiDocument } from '../openapi-document';

type JsonSchema = Record<string, unknown>;

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
}

interface Operation {
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { content?: { 'application/json'?: { schema?: JsonSchema } } };
}

/**
 * A tool's input schema, built from the operation it mirrors in schemas/openapi.yaml: its
 * path and query parameters and the properties of its JSON body, side by side in one object
 * (the contract has no name used twice). The contract stays the one statement of each rule;
 * zod is the form the SDK takes, and it checks the arguments before the tool runs.
 * Shared parameters (`$ref`: the time zone and the workspace header) are left out: dates come
 * in the server's default zone, and a token acts in its own workspace.
 */
export function operationInputSchema(operationId: string): z.ZodType {
  const operation = findOperation(operationId);
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  let closed = true;
  for (const parameter of operation.parameters ?? []) {
    if ('$ref' in parameter || (parameter.in !== 'path' && parameter.in !== 'query')) continue;
    properties[parameter.name] = {
      ...(resolveRefs(parameter.schema ?? {}) as JsonSchema),
      ...(parameter.description ? { description: parameter.description } : {}),
    };
    if (parameter.required) required.push(parameter.name);
  }
  const body = operation.requestBody?.content?.['application/json']?.schema;
  if (body) {
    const resolved = resolveRefs(body) as { properties?: Record<string, unknown>; required?: string[]; additionalProperties?: unknown };
    for (const [name, schema] of Object.entries(resolved.properties ?? {})) {
      if (name in properties) throw new Error(`${operationId}: "${name}" is both a parameter and a body field`);
      properties[name] = schema;
    }
    required.push(...(resolved.required ?? []));
    closed = resolved.additionalProperties === false;
  }
  return z.fromJSONSchema({ type: 'object', properties, required, additionalProperties: !closed } as never);
}

function findOperation(operationId: string): Operation {
  const paths = (openApiDocument().paths ?? {}) as Record<string, Record<string, Operation & { operationId?: string }>>;
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      if (typeof operation === 'object' && operation?.operationId === operationId) return operation;
    }
  }
  throw new Error(`no operation ${operationId} in schemas/openapi.yaml`);
}

/** The schema with every `#/components/schemas/...` reference replaced by its target (the contract's schemas are not recursive). */
function resolveRefs(schema: unknown, depth = 0): unknown {
  if (depth > 32) throw new Error('schema nesting too deep: a recursive $ref?');
  if (Array.isArray(schema)) return schema.map((item) => resolveRefs(item, depth + 1));
  if (schema === null || typeof schema !== 'object') return schema;
  const ref = (schema as { $ref?: unknown }).$ref;
  if (typeof ref === 'string') {
    const name = /^#\/components\/schemas\/(.+)$/.exec(ref)?.[1];
    const target = name ? ((openApiDocument().components as { schemas?: Record<string, unknown> } | undefined)?.schemas ?? {})[name] : undefined;
    if (!target) throw new Error(`unresolvable $ref ${ref}`);
    return resolveRefs(target, depth + 1);
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, resolveRefs(value, depth + 1)]));
}
