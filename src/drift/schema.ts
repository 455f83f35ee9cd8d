// Checks a structured-output answer against the JSON Schema its request asked for
// (`response_format: { type: 'json_schema' }` and its Responses and Anthropic equivalents). The
// subset the providers accept for structured outputs: type (one or a list), properties,
// required, additionalProperties, items, enum, const, anyOf / oneOf, and $ref into $defs or
// definitions. Anything else in a schema is not checked (never reported as a mismatch).

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function typeMatches(t: string, v: unknown): boolean {
  switch (t) {
    case 'object':
      return isObj(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    case 'null':
      return v === null;
    default:
      return true;
  }
}

function resolveRef(root: Obj, ref: string): Obj | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let x: unknown = root;
  for (const part of ref.slice(2).split('/')) x = isObj(x) ? x[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  return isObj(x) ? x : undefined;
}

function check(root: Obj, schema: unknown, v: unknown, path: string, out: string[], depth: number): void {
  if (!isObj(schema) || depth > 64 || out.length >= 20) return;
  if (typeof schema.$ref === 'string') {
    const target = resolveRef(root, schema.$ref);
    if (target) check(root, target, v, path, out, depth + 1);
    return;
  }
  const at = path || '(root)';
  const types = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? schema.type.filter((t): t is string => typeof t === 'string') : [];
  if (types.length > 0 && !types.some((t) => typeMatches(t, v))) {
    out.push(`${at}: expected ${types.join(' or ')}, found ${v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v}`);
    return;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(v))) out.push(`${at}: ${JSON.stringify(v)} is not one of the allowed values`);
  if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(v)) out.push(`${at}: expected ${JSON.stringify(schema.const)}`);
  for (const k of ['anyOf', 'oneOf'] as const) {
    const alts = schema[k];
    if (Array.isArray(alts) && alts.length > 0) {
      const fits = alts.some((s) => {
        const sub: string[] = [];
        check(root, s, v, path, sub, depth + 1);
        return sub.length === 0;
      });
      if (!fits) out.push(`${at}: matches none of the ${k} alternatives`);
    }
  }
  if (isObj(v)) {
    const props = isObj(schema.properties) ? schema.properties : {};
    if (Array.isArray(schema.required)) for (const r of schema.required) if (typeof r === 'string' && !Object.hasOwn(v, r)) out.push(`${path ? `${path}.` : ''}${r}: required, missing`);
    for (const [k, x] of Object.entries(v)) {
      const p = path ? `${path}.${k}` : k;
      if (Object.hasOwn(props, k)) check(root, props[k], x, p, out, depth + 1);
      else if (schema.additionalProperties === false) out.push(`${p}: not allowed by the schema`);
      else if (isObj(schema.additionalProperties)) check(root, schema.additionalProperties, x, p, out, depth + 1);
    }
  }
  if (Array.isArray(v) && schema.items !== undefined) v.forEach((x, i) => check(root, schema.items, x, `${path}[${i}]`, out, depth + 1));
}

/**
 * The ways a value breaks a JSON Schema (empty when it fits), at most 20, each `path: problem`.
 *
 * @example
 * schemaProblems({ type: 'object', required: ['city'], properties: { city: { type: 'string' } } }, { town: 'Paris' })
 * // ['city: required, missing']
 */
export function schemaProblems(schema: unknown, value: unknown): string[] {
  const out: string[] = [];
  if (isObj(schema)) check(schema, schema, value, '', out, 0);
  return out;
}

/**
 * The JSON Schema a request asks its answer to follow, or undefined; `json: true` when it asks
 * for JSON without a schema (`json_object`).
 *
 * @example
 * requestedSchema({ response_format: { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object' } } } })
 * // { json: true, schema: { type: 'object' } }
 */
export function requestedSchema(request: unknown): { json: true; schema?: unknown } | undefined {
  if (!isObj(request)) return undefined;
  const rf = isObj(request.response_format) ? request.response_format : undefined; // OpenAI chat
  if (rf?.type === 'json_schema' && isObj(rf.json_schema)) return { json: true, schema: rf.json_schema.schema };
  if (rf?.type === 'json_object') return { json: true };
  const tf = isObj(request.text) && isObj(request.text.format) ? request.text.format : undefined; // Responses
  if (tf?.type === 'json_schema') return { json: true, schema: tf.schema };
  if (tf?.type === 'json_object') return { json: true };
  const of = isObj(request.output_format) ? request.output_format : undefined; // Anthropic structured outputs
  if (of?.type === 'json_schema') return { json: true, schema: of.schema };
  return undefined;
}
