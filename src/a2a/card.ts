/**
 * Agent cards: where to find one, what it must contain, and which endpoint
 * and protocol dialect it implies.
 */
import { z } from 'zod';
import { formatProblems, toProblems } from '../protocol/index.js';
import { PeerError, type Headers, type PeerHttp } from './http.js';
import type { DialectName } from '../wire/a2a.js';

const Skill = z.looseObject({
  id: z.string().optional(),
  name: z.string().optional(),
  description: z.string().optional(),
  tags: z.array(z.string()).optional(),
});
export type Skill = z.output<typeof Skill>;

const Interface = z.looseObject({
  url: z.string(),
  protocolBinding: z.string().optional(),
  transport: z.string().optional(),
  protocolVersion: z.string().optional(),
});

/** The fields of a card the gateway uses (both A2A 1.0 and 0.3 shapes); the rest is kept, not checked. */
export const AgentCard = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  version: z.string().optional(),
  skills: z.array(Skill),
  capabilities: z.looseObject({ streaming: z.boolean().optional() }).optional(),
  /** A2A 1.0 */
  supportedInterfaces: z.array(Interface).optional(),
  /** A2A 0.3 */
  url: z.string().optional(),
  preferredTransport: z.string().optional(),
  additionalInterfaces: z.array(Interface).optional(),
  protocolVersion: z.string().optional(),
});
export type AgentCard = z.output<typeof AgentCard>;

/** A card, where it was found, and how to call the agent. */
export interface ResolvedCard {
  card: AgentCard;
  cardUrl: string;
  /** JSON-RPC endpoint. */
  endpoint: string;
  dialect: DialectName;
  streaming: boolean;
}

/**
 * Where to look for the card: a URL ending in `.json` as given; otherwise
 * `<url>/.well-known/agent-card.json`, `<origin>/.well-known/agent-card.json`,
 * then `<origin>/.well-known/agent.json` (older peers).
 */
export function cardCandidates(url: string): string[] {
  const u = new URL(url);
  if (u.pathname.endsWith('.json')) return [u.href];
  const base = u.href.endsWith('/') ? u.href : `${u.href}/`;
  const list = [
    new URL('.well-known/agent-card.json', base).href,
    new URL('/.well-known/agent-card.json', u).href,
    new URL('/.well-known/agent.json', u).href,
  ];
  return [...new Set(list)];
}

/**
 * Fetch and check the card. Tries each candidate URL in turn (a 404, an
 * HTTP error or a non-card moves on; a network failure stops at once, since
 * every candidate is on the same host). Throws PeerError saying what was
 * wrong at each URL tried.
 */
export async function fetchCard(
  http: PeerHttp,
  url: string,
  headers: Headers,
  signal: AbortSignal,
): Promise<ResolvedCard> {
  const problems: string[] = [];
  for (const candidate of cardCandidates(url)) {
    let raw: unknown;
    try {
      // A2A 1.0 servers that also speak 0.3 serve the 0.3 card to requests without a version.
      raw = await http.getJson(candidate, { 'A2A-Version': '1.0', ...headers }, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      if (err instanceof PeerError && err.network) throw err;
      problems.push((err as Error).message);
      continue;
    }
    const parsed = AgentCard.safeParse(raw);
    if (!parsed.success) {
      problems.push(`${candidate} is not an agent card: ${formatProblems(toProblems(parsed.error.issues))}`);
      continue;
    }
    return resolveCard(parsed.data, candidate);
  }
  throw new PeerError(problems.join('; '));
}

/** Endpoint and dialect of an already-parsed card found at `cardUrl`. */
export function resolveCard(card: AgentCard, cardUrl: string): ResolvedCard {
  const origin = new URL('/', cardUrl).href;
  const isJsonRpc = (i: z.output<typeof Interface>) =>
    (i.protocolBinding ?? i.transport ?? 'JSONRPC').toUpperCase() === 'JSONRPC';
  let endpoint: string | undefined;
  let dialect: DialectName = '1.0';
  if (card.supportedInterfaces?.length) {
    const rpc = card.supportedInterfaces.filter(isJsonRpc);
    // Prefer a 1.x interface; an agent that only offers 0.x is spoken to in 0.3.
    const v1 = rpc.find((i) => !i.protocolVersion || !i.protocolVersion.startsWith('0.'));
    const chosen = v1 ?? rpc[0];
    if (chosen) {
      endpoint = chosen.url;
      dialect = v1 ? '1.0' : '0.3';
    }
  } else if (card.url || card.additionalInterfaces?.length) {
    dialect = '0.3';
    const preferred = (card.preferredTransport ?? 'JSONRPC').toUpperCase() === 'JSONRPC' ? card.url : undefined;
    endpoint = preferred ?? card.additionalInterfaces?.find(isJsonRpc)?.url;
  }
  let resolved = origin;
  if (endpoint) {
    try {
      resolved = new URL(endpoint, cardUrl).href;
    } catch {
      resolved = origin;
    }
  }
  return { card, cardUrl, endpoint: resolved, dialect, streaming: card.capabilities?.streaming === true };
}

/**
 * The gateway calls the agent on the card's own origin only: a card naming
 * its JSON-RPC endpoint elsewhere is refused unless the operator allowed that
 * (`cross_origin`, or its older name `cross_origin_headers`). Otherwise a
 * card (which its peer controls) could aim the gateway's requests, and the
 * configured headers, at any host the gateway can reach.
 */
export function checkEndpointOrigin(
  resolved: ResolvedCard,
  agent: { name: string; card: string; cross_origin?: boolean | undefined; cross_origin_headers: boolean },
): void {
  if (agent.cross_origin || agent.cross_origin_headers) return;
  const cardOrigin = new URL(agent.card).origin;
  const endpointOrigin = new URL(resolved.endpoint).origin;
  if (endpointOrigin === cardOrigin) return;
  throw new PeerError(
    `the card names its JSON-RPC endpoint on ${endpointOrigin}, not on the card's origin ${cardOrigin}; the gateway ` +
      `calls an agent on its card's origin only. If that endpoint is the agent's own, set agents.${agent.name}.cross_origin: true ` +
      `(the older agents.${agent.name}.cross_origin_headers: true works too)`,
  );
}
