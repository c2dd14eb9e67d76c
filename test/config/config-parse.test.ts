/**
 * A config is parsed once (at start, on a reload), so parseConfig skips zod's JIT: compiling a parser for each of
 * its object schemas cost more than that one parse (measured: about 7% of `serve`'s start-up). Same checks, same issues,
 * same output as the JIT path.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineConfig, parseConfig } from '../../src/config/index.js';
import { GatewayConfig } from '../../src/config/schema.js';

/** How many functions zod compiles (`new Function`, its JIT) while `run` runs. */
function compiledDuring(run: () => void): number {
  const F = globalThis.Function;
  let compiled = 0;
  const count = (): void => void compiled++;
  globalThis.Function = new Proxy(F, {
    construct: (target, args) => (count(), Reflect.construct(target, args)),
    apply: (target, self, args) => (count(), Reflect.apply(target, self, args)),
  });
  try {
    run();
  } finally {
    globalThis.Function = F;
  }
  return compiled;
}

const CONFIGS: unknown[] = [
  {},
  {
    server: { port: 0, cors_origins: ['https://app.example'] },
    tools: { fs: { root: '/srv/ws' }, shell: { enabled: false }, http: { allow_private: true } },
    auth: { tokens: [{ name: 'ci', token_env: 'CI_TOKEN', admin: true }] },
    limits: { max_json_depth: 32 },
    mcp: { serve: { enabled: false } },
  },
  // Refused: issues must be the same too.
  { server: { port: 'eighty', hots: 'x' }, tools: { fs: { root: 3 } }, auth: { tokens: [{ name: '' }] } },
];

describe('config parsing', () => {
  it('compiles no JIT parsers (the spy sees a JIT parse compile one)', () => {
    expect(compiledDuring(() => z.object({ a: z.string() }).parse({ a: 'x' }))).toBeGreaterThan(0);
    expect(
      compiledDuring(() => {
        defineConfig();
        parseConfig(CONFIGS[1], { source: 'test', env: {} });
      }),
    ).toBe(0);
  });

  it('accepts, refuses and fills in exactly as the JIT path does', () => {
    for (const input of CONFIGS) {
      const jit = GatewayConfig.safeParse(structuredClone(input), { reportInput: true });
      const once = GatewayConfig.safeParse(structuredClone(input), { reportInput: true, jitless: true });
      expect(once.success).toBe(jit.success);
      if (jit.success) expect(once.data).toEqual(jit.data);
      else expect(once.error?.issues).toEqual(jit.error.issues);
    }
    expect(() => parseConfig(CONFIGS[2])).toThrow(/invalid config in config: /);
  });
});
