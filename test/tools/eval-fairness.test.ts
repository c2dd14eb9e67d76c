/**
 * eval_js slots are shared fairly between principals (issue 20, finding 7):
 * one token's endless loops cannot keep another token's evaluation from
 * running. Real gateway with two bearer tokens, real QuickJS workers; the
 * loops are stopped by cancelling their calls, bounded by their own timeouts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { callBody } from '../helpers/server.js';
import { post, sha256, startSecureGateway, type SecureGateway } from '../security/helpers.js';

const HOG = 'hog-eval-token-0123456789abcdef0123';
const VICTIM = 'victim-eval-token-fedcba9876543210ab';
const hog = { Authorization: `Bearer ${HOG}` };
const victim = { Authorization: `Bearer ${VICTIM}` };

let gw: SecureGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

async function start(evalConfig: Record<string, unknown>): Promise<SecureGateway> {
  gw = await startSecureGateway({
    config: {
      auth: {
        tokens: [
          { name: 'hog', token_sha256: sha256(HOG) },
          { name: 'victim', token_sha256: sha256(VICTIM) },
        ],
      },
      sessions: { required: false },
      tools: { eval: { enabled: true, ...evalConfig } },
    },
  });
  return gw;
}

/** Start an endless loop as a background call of the hog; returns its result URL. */
async function loop(g: SecureGateway, evalTimeoutS: number): Promise<string> {
  const r = await post(
    `${g.url}/tool/calls`,
    callBody('eval_js', { code: 'for (;;) {}', timeout: evalTimeoutS }, { timeout: 90 }),
    hog,
  );
  expect(r.status).toBe(202);
  return r.json.result_url as string;
}

const waitUntil = async (what: string, check: () => boolean, ms = 30_000) => {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

async function victimEval(g: SecureGateway): Promise<{ data: any; ms: number }> {
  const started = performance.now();
  const r = await post(
    `${g.url}/tool/call`,
    callBody('eval_js', { code: '"victim ran"', timeout: 20 }, { timeout: 30 }),
    victim,
  );
  return { data: r.json.data, ms: performance.now() - started };
}

async function stopAll(g: SecureGateway, urls: string[]): Promise<void> {
  for (const url of urls) expect((await fetch(url, { method: 'DELETE', headers: hog })).status).toBe(200);
  await waitUntil('the loops to stop', () => g.gateway.engine.running === 0);
}

describe('eval_js fair share', () => {
  it("one token's endless loops cannot fill every slot: another token's evaluation runs at once", async () => {
    const g = await start({ max_running: 4 }); // default share: 2 per principal
    const loops = [];
    for (let i = 0; i < 4; i++) loops.push(await loop(g, 60));
    await waitUntil('the four loops to be running or waiting', () => g.gateway.engine.running === 4);
    const { data, ms } = await victimEval(g);
    expect(data).toMatchObject({ success: true, data: { result: 'victim ran' } });
    // It did not wait for the loops (they run for 60 s); a generous bound for a busy machine.
    expect(ms).toBeLessThan(15_000);
    expect(g.gateway.engine.running).toBe(4);
    // None of the hog's calls was refused or ended: its third and fourth wait for its share.
    const states = await Promise.all(loops.map(async (u) => (await (await fetch(u, { headers: hog })).json()).state));
    expect(states).toEqual(['running', 'running', 'running', 'running']);
    await stopAll(g, loops);
  });

  it('a free slot goes to the waiting token running the fewest, ahead of the hog queued earlier', async () => {
    // The hog may take every slot (share = max_running); fairness is then in who gets the next free one.
    const g = await start({ max_running: 2, max_running_per_principal: 2 });
    const short = [await loop(g, 3), await loop(g, 3)]; // end by their own deadline after ~3 s
    await waitUntil('the two short loops to run', () => g.gateway.engine.running === 2);
    const queued = [await loop(g, 60), await loop(g, 60)]; // wait for a slot: FIFO would give them both
    await waitUntil('the queued loops to be waiting', () => g.gateway.engine.running === 4);
    const { data, ms } = await victimEval(g);
    // The victim's call (timeout 20 s) ran when the first short loop ended, not after the 60 s loops.
    expect(data).toMatchObject({ success: true, data: { result: 'victim ran' } });
    expect(ms).toBeLessThan(18_000);
    await stopAll(g, [...short, ...queued]);
  });
});
