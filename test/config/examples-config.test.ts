/** Every config in examples/ parses as written (and says what it is for), so the examples cannot rot. */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../src/index.js';

const dir = fileURLToPath(new URL('../../examples/', import.meta.url));
const env = { ALICE_TOKEN: 'example-token' };

describe('examples/*.yaml', async () => {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml'));
  it('has the common setups', () => {
    expect(files).toEqual(
      expect.arrayContaining(['gateway.yaml', 'local-dev.yaml', 'behind-nginx.yaml', 'with-agents.yaml']),
    );
  });

  it.each(files)('%s parses, and starts with a comment saying what it is for', async (file) => {
    expect((await readFile(join(dir, file), 'utf8')).startsWith('# ')).toBe(true);
    await expect(loadConfigFile(join(dir, file), env)).resolves.toBeDefined();
  });

  it('behind-nginx.yaml: the public name is allowed, the proxy trusted, tokens on', async () => {
    const c = await loadConfigFile(join(dir, 'behind-nginx.yaml'), env);
    expect(c.server).toMatchObject({ base_path: '/a2e', trust_proxy: true, allowed_hosts: ['gateway.example.com'] });
    expect(c.auth?.tokens.map((t) => t.name)).toEqual(['alice', 'ci']);
  });

  it('local-dev.yaml: ${PORT:-8080} is a number', async () => {
    expect((await loadConfigFile(join(dir, 'local-dev.yaml'), {})).server.port).toBe(8080);
    expect((await loadConfigFile(join(dir, 'local-dev.yaml'), { PORT: '9000' })).server.port).toBe(9000);
  });
});
