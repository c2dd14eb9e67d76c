/**
 * tools.http.credentials (issue 56): http_request adds a configured
 * credential to requests matching an origin and path prefix, so the caller
 * reaches the API without holding the key; a redirect never carries one to
 * another origin (not even that origin's own); an answer echoing it shows it
 * redacted. Real servers: test/helpers/openapi-api.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoServer, startTestApi, type TestApi } from '../helpers/openapi-api.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const TOKEN = 'tok-http-credential-5f4e3d2c1b';
const OTHER_KEY = 'other-origin-key-9a8b7c6d';

describe('tools.http.credentials', { timeout: 60_000 }, () => {
  let api: TestApi;
  let other: TestApi;
  let gw: TestGateway;
  const get = async (url: string) => (await postJson(`${gw.url}/tool/call`, callBody('http_request', { url }))).json;
  beforeAll(async () => {
    other = await startEchoServer();
    api = await startTestApi({ auth: { type: 'bearer', token: TOKEN }, otherOrigin: other.url });
    gw = await startGateway({
      config: {
        tools: {
          http: {
            allow_private: true,
            credentials: [
              { match: `${api.url}/api/*`, auth: { type: 'bearer', token_env: 'API_TOKEN' } },
              { match: `${other.url}/*`, auth: { type: 'header', name: 'X-Api-Key', value_env: 'OTHER_KEY' } },
            ],
          },
        },
      },
      env: { API_TOKEN: TOKEN, OTHER_KEY },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await api?.close();
    await other?.close();
  });

  it('a matching request gets the credential; one outside the prefix does not', async () => {
    const r = await get(`${api.url}/api/items/7`);
    expect(r.data).toMatchObject({ success: true, data: { status: 200 } });
    expect(api.requests.at(-1)!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    await get(`${api.url}/openapi.json`);
    expect(api.requests.at(-1)).toMatchObject({ url: '/openapi.json' });
    expect(api.requests.at(-1)!.headers.authorization).toBeUndefined();
  });

  it('an answer echoing the credential shows it redacted', async () => {
    const r = await get(`${other.url}/echo/me`);
    expect(other.requests.at(-1)!.headers['x-api-key']).toBe(OTHER_KEY);
    expect(JSON.parse(r.data.data.body).headers['x-api-key']).toBe('[redacted]');
    expect(JSON.stringify(r)).not.toContain(OTHER_KEY);
  });

  it("a redirect to another origin carries no credential, not even that origin's own", async () => {
    const before = other.requests.length;
    const r = await get(`${api.url}/api/elsewhere`);
    expect(r.data).toMatchObject({ success: true, data: { status: 200, redirects: 1 } });
    const landed = other.requests.slice(before);
    expect(landed.map((q) => q.url)).toEqual(['/landing']);
    expect(landed[0]!.headers.authorization).toBeUndefined();
    expect(landed[0]!.headers['x-api-key']).toBeUndefined();
  });

  it('an unset environment variable fails the start, naming the entry and the variable', async () => {
    await expect(
      startGateway({
        config: {
          tools: {
            http: {
              credentials: [
                { match: 'https://api.example.com/*', auth: { type: 'bearer', token_env: 'UNSET_TOKEN_VAR' } },
              ],
            },
          },
        },
        env: {},
      }),
    ).rejects.toThrow(
      /tools\.http\.credentials\[0\] \(https:\/\/api\.example\.com\/\*\): environment variable UNSET_TOKEN_VAR is not set/,
    );
  });
});
