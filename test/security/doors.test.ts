/**
 * Every door authenticates alike (issue 20, finding 2). The same echo call
 * — with no credential, with a token whose allow list leaves echo out, and
 * with a token that may call it — goes through every door of
 * test/helpers/doors.ts, under every combination of `auth` on/off and
 * `sessions.required` true/false, over real HTTP. With auth, no door runs a
 * tool without a credential and the token's allow list decides the same
 * everywhere; a new door is one more row in DOORS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOORS, type DoorGateway, type Knock } from '../helpers/doors.js';
import { sha256, startSecureGateway, type SecureGateway } from './helpers.js';

const OWNER = 'doors-owner-token-0123456789abcdef';
const RESTRICTED = 'doors-restricted-token-0123456789';

const knocks = (auth: boolean): Knock[] => [
  { name: 'no credential', token: undefined, session: false },
  { name: 'no credential, after an anonymous handshake', token: undefined, session: true },
  ...(auth
    ? [
        { name: 'a token whose allow list leaves echo out', token: RESTRICTED, session: false },
        { name: 'a token whose allow list leaves echo out, in its session', token: RESTRICTED, session: true },
        { name: 'the token allowed to call echo', token: OWNER, session: false },
        { name: 'the token allowed to call echo, in its session', token: OWNER, session: true },
      ]
    : []),
];

const combos = [
  { auth: true, required: true },
  { auth: true, required: false },
  { auth: false, required: true },
  { auth: false, required: false },
];

describe.each(combos)('every door with auth: $auth, sessions.required: $required', ({ auth, required }) => {
  let gw: SecureGateway;
  let door: DoorGateway;
  beforeAll(async () => {
    gw = await startSecureGateway({
      config: {
        ...(auth
          ? {
              auth: {
                tokens: [
                  { name: 'owner', token_sha256: sha256(OWNER) },
                  { name: 'restricted', token_sha256: sha256(RESTRICTED), allow: ['read_*'] },
                ],
              },
            }
          : {}),
        sessions: { required },
      },
    });
    door = {
      url: gw.url,
      auth,
      sessionsRequired: required,
      ownerToken: auth ? OWNER : undefined,
      mayCall: (token) => token === OWNER,
    };
  });
  afterAll(() => gw.close());

  it.each(DOORS.map((d) => [d.name, d] as const))('%s', async (_name, d) => {
    const got: string[] = [];
    const want: string[] = [];
    for (const who of knocks(auth)) {
      const outcome = await d.attempt(door, who);
      const expected = d.expects(door, who);
      want.push(`${who.name}: ${expected}`);
      got.push(`${who.name}: ${outcome.result}${outcome.result === expected ? '' : `  (${outcome.evidence})`}`);
    }
    expect(got).toEqual(want);
  });
});
