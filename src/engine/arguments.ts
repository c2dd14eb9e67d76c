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
        error: (iss) => (iss.input === undefined ? 'required integer is missing' : `expected integer, got ${typeOf(iss.input)}`),
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

/** Build the validator for one tool. Throws if the parameters are themselves malformed. */
export function compileArguments(params: readonly ToolParameter[]): ArgumentValidator {
  const names = new Set<string>();
  for (const p of params) {
    if (names.has(p.name)) throw new Error(`input parameter "${p.name}" is declared twice`);
    names.add(p.name);
  }
  const schema = objectSchema(params);
  return (args) => {
    const r = schema.safeParse(args, { reportInput: true });
    if (r.success) return { ok: true, value: r.data as Record<string, unknown> };
    return { ok: false, problems: toProblems(r.error.issues, 'arguments') };
  };
}
