import Ajv2020 from 'ajv/dist/2020';

const checker = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });

/**
 * Whether a tool's `parameters` is a usable JSON Schema (dialect 2020-12, the one of
 * OpenAPI 3.1) of an arguments object: it must pass the meta-schema, compile (so every `$ref`
 * resolves), and describe an object when it names a type, since the arguments are sent as
 * query parameters or as a JSON object. Unknown keywords are allowed, as JSON Schema allows.
 * Answers why not, or null.
 */
export function toolParametersProblem(parameters: Record<string, unknown>): string | null {
  if ('type' in parameters && parameters.type !== 'object') return 'must describe an object (type "object"): the model fills in named arguments';
  if (!checker.validateSchema(parameters)) return `is not a valid JSON Schema: ${checker.errorsText(checker.errors, { dataVar: 'parameters' })}`;
  try {
    checker.compile(parameters);
  } catch (err) {
    return `is not a valid JSON Schema: ${(err as Error).message}`;
  } finally {
    // Compiled schemas are cached by identity and by `$id`; each check must stand alone.
    checker.removeSchema(parameters);
  }
  return null;
}
