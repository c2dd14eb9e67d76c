/** Which keys a reloaded config changes, which are live, and the config the gateway runs with afterwards. */
import { describe, expect, it } from 'vitest';
import { defineConfig } from '../../src/index.js';
import { configChanges } from '../../src/reload/changes.js';

const TOKEN = { name: 'ops', token_sha256: 'a'.repeat(64) };

describe('configChanges', () => {
  it('nothing changed: nothing to apply or restart', () => {
    expect(configChanges(defineConfig({}), defineConfig({}))).toMatchObject({ applied: [], restartNeeded: [] });
  });

  it('live keys are applied; the others are reported and keep their running value', () => {
    const running = defineConfig({ server: { port: 8080, base_path: '/a' }, policy: { deny: ['x'] } });
    const next = defineConfig({
      server: { port: 9090, base_path: '/b', max_timeout_s: 60 },
      policy: { deny: ['y'] },
      agents: { p: { card: 'http://127.0.0.1:1' } },
    });
    const changes = configChanges(running, next);
    expect(changes.applied).toEqual(['server.max_timeout_s', 'agents.p', 'policy.deny']);
    expect(changes.restartNeeded).toEqual(['server.port', 'server.base_path']);
    expect(changes.effective.server).toMatchObject({ port: 8080, base_path: '/a', max_timeout_s: 60 });
    expect(changes.effective.policy.deny).toEqual(['y']);
    expect(changes.effective.agents.p).toBeDefined();
    // The running config is not touched.
    expect(running.policy.deny).toEqual(['x']);
  });

  it('tokens change live, but turning auth on or off needs a restart (the section is kept as it was)', () => {
    const withAuth = defineConfig({ auth: { tokens: [TOKEN] } });
    const more = defineConfig({ auth: { tokens: [TOKEN, { ...TOKEN, name: 'user' }] } });
    expect(configChanges(withAuth, more)).toMatchObject({ applied: ['auth.tokens'], restartNeeded: [] });
    const off = configChanges(withAuth, defineConfig({}));
    expect(off.restartNeeded).toEqual(['auth']);
    expect(off.effective.auth).toEqual(withAuth.auth);
    const on = configChanges(defineConfig({}), withAuth);
    expect(on.restartNeeded).toEqual(['auth']);
    expect(on.effective.auth).toBeUndefined();
  });

  it('the retention of finished calls and server.trust_proxy need a restart', () => {
    const next = defineConfig({
      calls: { max_retained: 5, max_retained_per_principal: 2 },
      server: { trust_proxy: ['10.0.0.0/8'] },
    });
    const changes = configChanges(defineConfig({}), next);
    expect(changes.applied).toEqual([]);
    expect(changes.restartNeeded.sort()).toEqual([
      'calls.max_retained',
      'calls.max_retained_per_principal',
      'server.trust_proxy',
    ]);
  });

  it('mcp.serve needs a restart while mcp.servers is live', () => {
    const changes = configChanges(
      defineConfig({}),
      defineConfig({ mcp: { serve: { enabled: false }, start_wait_ms: 10 } }),
    );
    expect(changes.applied).toEqual(['mcp.start_wait_ms']);
    expect(changes.restartNeeded).toEqual(['mcp.serve.enabled']);
    expect(changes.effective.mcp.serve.enabled).toBe(true);
  });
});
