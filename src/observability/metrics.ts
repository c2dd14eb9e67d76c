/**
 * Prometheus metrics of one gateway. Fed by the engine's audit records (one
 * per call, refused ones included) and a few small hooks; knows nothing of
 * HTTP. The counts are plain numbers (labeled-metrics.ts); prom-client (and
 * the OpenTelemetry API it loads, about 80 modules) is loaded by the first
 * scrape, not at start-up, so its process metrics (event-loop lag, GC) count
 * from that scrape on. Each gateway has its own registry, so several gateways
 * in one process (tests, embedding) never clash.
 */
import type * as PromClient from 'prom-client';
import type { Registry } from 'prom-client';
import { loadPackage } from '../load-package.js';
import { LabeledCounter, LabeledHistogram, type CounterSample, type HistogramSample } from './labeled-metrics.js';
import type { AuditRecord, AuditSink } from '../engine/index.js';

/** Reports how many A2A agents are in each state, e.g. `{ ready: 2, unreachable: 1 }`. Read on every scrape. */
export type AgentStatesSource = () => Readonly<Record<string, number>>;

// Tool names of refused calls come from the client: never use them as a label value, or anyone could
// grow the metric without bound by calling made-up names.
const UNKNOWN_TOOL = '(unknown)';

/** The samples one (tool, kind, outcome) counts into. */
interface Series {
  kind: string;
  calls: CounterSample;
  duration: HistogramSample;
}

export class GatewayMetrics {
  private readonly calls = new LabeledCounter(
    'a2e_tool_calls_total',
    'Tool calls by tool, kind, door (rest, a2e, mcp, …) and outcome (success, tool_error, or the error code of a refused call)',
  );
  private readonly duration = new LabeledHistogram(
    'a2e_tool_call_duration_seconds',
    'Duration of tool calls that ran, by tool, kind and door',
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  );
  private readonly approvals = new LabeledCounter(
    'a2e_approvals_total',
    'Approval outcomes of gated calls by decision (approve, deny, expired)',
  );
  private readonly approvalWait = new LabeledHistogram(
    'a2e_approval_wait_seconds',
    'Time gated calls waited for their approval decision',
    [1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600],
  );
  private openStreams = 0;
  private readonly agentSources = new Set<AgentStatesSource>();
  /** Made by the first scrape. */
  private registry: Promise<Registry> | undefined;
  /**
   * By door, then tool, then outcome. Bounded: doors and outcomes are fixed sets, tool names are the
   * registry's (unknown ones share one).
   */
  private readonly series = new Map<string, Map<string, Map<string, Series>>>();

  constructor(private readonly options: { inFlight: () => number; processMetrics?: boolean }) {}

  /** The prom-client registry with every metric, loading prom-client the first time. */
  private loadRegistry(): Promise<Registry> {
    this.registry ??= loadPackage<typeof PromClient>('prom-client').then(
      ({ collectDefaultMetrics, Gauge, Registry }) => {
        const registry = new Registry();
        const registers = [registry];
        registry.registerMetric(this.calls as never);
        registry.registerMetric(this.duration as never);
        registry.registerMetric(this.approvals as never);
        registry.registerMetric(this.approvalWait as never);
        const { inFlight } = this.options;
        new Gauge({
          name: 'a2e_tool_calls_in_flight',
          help: 'Tool calls currently running',
          registers,
          collect() {
            this.set(inFlight());
          },
        });
        const open = () => this.openStreams;
        new Gauge({
          name: 'a2e_sse_streams_open',
          help: 'Server-Sent-Events streams currently open',
          registers,
          collect() {
            this.set(open());
          },
        });
        const sources = this.agentSources;
        new Gauge({
          name: 'a2e_a2a_agents',
          help: 'Configured A2A agents by connection state',
          labelNames: ['state'],
          registers,
          collect() {
            this.reset();
            for (const source of sources) {
              for (const [state, count] of Object.entries(source())) this.inc({ state }, count);
            }
          },
        });
        if (this.options.processMetrics ?? true) collectDefaultMetrics({ register: registry });
        return registry;
      },
    );
    return this.registry;
  }

  /** Audit sink that counts every call and times the ones that ran. */
  readonly audit: AuditSink = (r: AuditRecord) => {
    if (r.approval !== undefined) {
      // An approval's outcome, not a call (the call has its own record when it settles).
      const decision = r.approval.decision;
      this.approvals.inc(this.approvals.sample({ decision }));
      this.approvalWait.observe(this.approvalWait.sample({ decision }), r.approval.wait_ms / 1000);
      return;
    }
    const ran = r.kind !== null && r.error_code !== 'unknown_tool';
    const tool = ran ? r.tool_name : UNKNOWN_TOOL;
    const kind = r.kind ?? '';
    const outcome = r.success ? 'success' : (r.error_code ?? 'error');
    const series = this.seriesFor(r.door, tool, kind, outcome);
    this.calls.inc(series.calls);
    if (ran && (r.success || r.error_code === 'tool_error'))
      this.duration.observe(series.duration, r.duration_ms / 1000);
  };

  /** The samples of one (tool, kind, outcome), looked up once: a call then builds no strings or objects. */
  private seriesFor(door: string, tool: string, kind: string, outcome: string): Series {
    let byTool = this.series.get(door);
    if (!byTool) this.series.set(door, (byTool = new Map()));
    let byOutcome = byTool.get(tool);
    if (!byOutcome) byTool.set(tool, (byOutcome = new Map()));
    let s = byOutcome.get(outcome);
    if (!s || s.kind !== kind) {
      s = {
        kind,
        calls: this.calls.sample({ tool, kind, door, outcome }),
        duration: this.duration.sample({ tool, kind, door }),
      };
      byOutcome.set(outcome, s);
    }
    return s;
  }

  /** An SSE stream opened; call the returned function once when it closes. */
  streamOpened(): () => void {
    this.openStreams++;
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      this.openStreams--;
    };
  }

  /** Let a plugin (the A2A one) report its agents' states; returns a function that unregisters it. */
  reportAgentStates(source: AgentStatesSource): () => void {
    this.agentSources.add(source);
    return () => this.agentSources.delete(source);
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    const registry = await this.loadRegistry();
    return { contentType: registry.contentType, body: await registry.metrics() };
  }
}
