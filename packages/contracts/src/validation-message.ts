/** The parts of an ajv error (or fastify's copy of one) the message is built from. */
export interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const FORMAT_NAMES: Record<string, string> = {
  email: 'a valid email address',
  uuid: 'a valid UUID',
  'date-time': 'an ISO 8601 date-time (e.g. 2024-01-31T09:30:00.000Z)',
  date: 'an ISO 8601 date (YYYY-MM-DD)',
  uri: 'a valid URL',
};

/**
 * Turns an ajv error into a sentence a person understands, naming the field by its path:
 * `email must be a string`, `limit must be <= 100`, `stages[0].name is required`,
 * `status must be one of: new, contacted, qualified, converted, closed`.
 * `subject` names the validated value itself, for errors about the whole of it
 * (`Request body must be an object`).
 */
export function describeValidationError(error: ValidationIssue, subject: string): string {
  const path = formatPath(error.instancePath);
  const { params } = error;
  const child = (name: unknown) => (path ? `${path}.${String(name)}` : String(name));
  const field = path || subject;

  switch (error.keyword) {
    case 'required':
    case 'dependentRequired':
      return `${child(params.missingProperty)} is required`;
    case 'additionalProperties':
      return `${child(params.additionalProperty)} is not an allowed field`;
    case 'type':
      return `${field} must be ${describeTypes(params.type)}`;
    case 'enum':
      return `${field} must be one of: ${listValues(params.allowedValues)}`;
    case 'const':
      return `${field} must be ${JSON.stringify(params.allowedValue)}`;
    case 'format':
      return `${field} must be ${FORMAT_NAMES[String(params.format)] ?? `a valid ${String(params.format)}`}`;
    case 'minLength':
      return params.limit === 1
        ? `${field} must not be empty`
        : `${field} must be at least ${String(params.limit)} characters long`;
    case 'maxLength':
      return `${field} must be at most ${String(params.limit)} characters long`;
    case 'minItems':
      return `${field} must have at least ${String(params.limit)} item${params.limit === 1 ? '' : 's'}`;
    case 'maxItems':
      return `${field} must have at most ${String(params.limit)} items`;
    case 'minProperties':
      return params.limit === 1
        ? `${field} must not be empty`
        : `${field} must have at least ${String(params.limit)} fields`;
    default:
      // minimum/maximum ("must be <= 100"), pattern, multipleOf ... ajv's own wording reads well after the path.
      return `${field} ${error.message ?? 'is invalid'}`;
  }
}

/** `/stages/0/name` -> `stages[0].name` (JSON pointer escapes undone). */
function formatPath(instancePath: string): string {
  if (!instancePath) return '';
  return instancePath
    .slice(1)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((path, segment) => {
      if (/^\d+$/.test(segment)) return `${path}[${segment}]`;
      return path ? `${path}.${segment}` : segment;
    }, '');
}

function describeTypes(type: unknown): string {
  const types = Array.isArray(type) ? type.map(String) : String(type).split(',');
  return types.map((t) => TYPE_NAMES[t] ?? t).join(' or ');
}

function listValues(values: unknown): string {
  return Array.isArray(values) ? values.map((v) => (v === null ? 'null' : String(v))).join(', ') : '';
}
