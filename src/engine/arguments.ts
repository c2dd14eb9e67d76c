/**
 * Compiles a tool's `input_parameters` into a zod validator, once per tool.
 * Rules: declared types, `required`, `enum`, nested object `properties`;
 * unknown keys are rejected at every level. `null` for an optional
 * parameter counts as "not given" (what most LLM tool callers send).
 */
import { z } from 'zod';
import { toProblems, typeOf, type Problem, type ToolParameter } from '../protocol/index.js';

export type ArgumentValidator = (
  args: Record<string, unknown>,
) => { ok: true; value: Record<string, unknown> } | { ok: false; problems: Problem[] };

const toUndefined = (v: unknown) => (v === null ? undefined : v);

function parameterSchema(p: ToolParameter): z.ZodType {
  let schema: z.ZodType;
  switch (p.type) {
    case 'string':
      schema = p.enum && p.enum.length > 0 ? z.enum(p.enum as [string, ...string[]]) : z.string();
      break;
    case 'integer':
      // zod reports a non-number for z.int() as "expected number": say integer.
      schema = z.int({
        error: (iss) =>
          iss.input === undefined ? 'required integer is missing' : `expected integer, got ${typeOf(iss.input)}`,
      });
      break;
    case 'number':
      schema = z.number();
      break;
    case 'boolean':
      schema = z.boolean();
      break;
    case 'array':
      schema = z.array(z.unknown());
      break;
    case 'object':
      schema = p.properties ? objectSchema(Object.values(p.properties)) : z.record(z.string(), z.unknown());
      break;
  }
  if (p.enum && p.enum.length > 0 && p.type !== 'string') {
    const allowed = new Set(p.enum);
    schema = schema.refine((v) => allowed.has(String(v)), {
      message: `must be one of: ${p.enum.join(', ')}`,
    });
  }
  return p.required ? schema : schema.nullish().transform(toUndefined);
}

function objectSchema(params: readonly ToolParameter[]): z.ZodType {
  const shape: Record<string, z.ZodType> = {};
  for (const p of params) shape[p.name] = parameterSchema(p);
  return z.strictObject(shape);
}

/**
 * Build the validator for one tool. Throws if the parameters are themselves
 * malformed. `fastPath: false` leaves out the hand-written check (tests compare both).
 */
export function compileArguments(
  params: readonly ToolParameter[],
  options: { fastPath?: boolean } = {},
): ArgumentValidator {
  const names = new Set<string>();
  for (const p of params) {
    if (names.has(p.name)) throw new Error(`input parameter "${p.name}" is declared twice`);
    names.add(p.name);
  }
  // The zod schema is built the first time the hand-written check cannot decide (a mistake, a null to drop): most
  // tools' arguments never need it, and building every tool's at registration was a measurable part of start-up.
  let schema: z.ZodType | undefined;
  const fast = options.fastPath === false ? undefined : fastValidator(params);
  return (args) => {
    // The schema would return a copy; the arguments are already the request's own copy (made by its parse).
    if (fast?.(args)) return { ok: true, value: args };
    const r = (schema ??= objectSchema(params)).safeParse(args, { reportInput: true });
    if (r.success) return { ok: true, value: r.data as Record<string, unknown> };
    return { ok: false, problems: toProblems(r.error.issues, 'arguments') };
  };
}

const SCALAR_CHECKS: Partial<Record<ToolParameter['type'], (v: unknown) => boolean>> = {
  string: (v) => typeof v === 'string',
  integer: (v) => Number.isSafeInteger(v),
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  boolean: (v) => typeof v === 'boolean',
};

/** An object parameter without declared properties (a record of anything): what its schema takes unchanged. */
function plainRecord(v: unknown): boolean {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || Object.getPrototypeOf(v) !== Object.prototype)
    return false;
  // The schema drops an own "__proto__" key: left to it.
  return !Object.hasOwn(v, '__proto__');
}

/**
 * For the common flat parameter list (scalars, enums of them, no nesting): a
 * check that says "valid as given" far faster than the schema. It only ever
 * accepts arguments the schema accepts unchanged; anything else (a problem,
 * a null, a nested parameter) is left to the schema, which words the
 * problems. Undefined when the parameter list is not that simple.
 */
function fastValidator(params: readonly ToolParameter[]): ((args: Record<string, unknown>) => boolean) | undefined {
  const checks = new Map<string, (v: unknown) => boolean>();
  const required: string[] = [];
  for (const p of params) {
    const scalar = p.type === 'object' && !p.properties ? plainRecord : SCALAR_CHECKS[p.type];
    if (!scalar) return undefined;
    let check = scalar;
    if (p.enum && p.enum.length > 0) {
      // As the schema: a string is one of the values; another type is valid and its String() is one of them.
      const allowed = new Set<string>(p.enum);
      check =
        p.type === 'string'
          ? (v) => allowed.has(v as string) && typeof v === 'string'
          : (v) => scalar(v) && allowed.has(String(v));
    }
    checks.set(p.name, check);
    if (p.required) required.push(p.name);
  }
  return (args) => {
    let known = 0;
    for (const key in args) {
      const check = checks.get(key);
      if (!check || !check(args[key])) return false;
      known++;
    }
    if (known < required.length) return false;
    for (const name of required) if (!Object.hasOwn(args, name)) return false;
    return true;
  };
}
