/**
 * What the chaos run runs against: one real redis-server (volatile, or
 * `appendonly yes`), three gateway processes (dist/cli.js serve) sharing it,
 * and a real nginx in front with the README's `upstream` block pointed at
 * them. A killed instance comes back on the same port, so nginx keeps
 * finding it. Clients talk to nginx only.
 */
import { startCluster, type Cluster, type Instance } from '../helpers/instances.js';
import { readmeBlock, startNginx, type Nginx } from '../helpers/nginx.js';
import { startRedis } from '../helpers/redis.js';

export interface Stage {
  /** http://127.0.0.1:PORT of nginx. */
  url: string;
  cluster: Cluster;
  /** The instance now serving each port (replaced on restart). */
  slots: Instance[];
  /** Every instance started, killed ones too (their output is read at the end). */
  all: Instance[];
  /** SIGKILL the instance in slot `i`. */
  kill(i: number): Promise<void>;
  /** Start slot `i` again on its port. */
  restart(i: number): Promise<void>;
  dispose(): Promise<void>;
}

export interface StageOptions {
  /** Redis with `appendonly yes` (fsync always) instead of no persistence. */
  persist: boolean;
  instances: number;
  /** calls.owner_lease_s */
  leaseS: number;
}

export async function startStage(options: StageOptions): Promise<Stage> {
  const redis = await startRedis({ persist: options.persist });
  let cluster: Cluster | undefined;
  let nginx: Nginx | undefined;
  try {
    cluster = await startCluster({
      redis,
      count: options.instances,
      prefix: 'a2e-chaos:',
      // Warnings and errors are kept (stdout) and summed up in the report.
      env: { LOG_LEVEL: 'warn' },
      config: [
        // No run_command: the cluster's directory is not the sandbox user's to reach, and the run needs no shell.
        'tools:',
        '  shell:',
        '    enabled: false',
        'sessions:',
        '  required: false',
        'calls:',
        `  owner_lease_s: ${options.leaseS}`,
        'transport:',
        '  max_sessions_per_address: 64',
      ].join('\n'),
    });
    const slots = [...cluster.instances];
    const ports = slots.map((g) => Number(new URL(g.url).port));
    nginx = await startNginx(await readmeUpstream(ports));
    const c = cluster;
    const n = nginx;
    return {
      url: n.url,
      cluster: c,
      slots,
      all: c.instances,
      async kill(i) {
        await slots[i]!.kill();
      },
      async restart(i) {
        slots[i] = await c.add({ port: ports[i]! });
      },
      async dispose() {
        await n.stop().catch(() => undefined);
        await c.dispose();
        await redis.dispose();
      },
    };
  } catch (err) {
    await nginx?.stop().catch(() => undefined);
    await cluster?.dispose().catch(() => undefined);
    await redis.dispose();
    throw err;
  }
}

/** The README's scale-out `upstream` block and `location /`, listing `ports`. */
async function readmeUpstream(ports: number[]): Promise<{ http: string; server: string }> {
  const block = await readmeBlock('scale-upstream', 'nginx');
  const upstream = /upstream a2e_gateways \{[\s\S]*?\n\}/.exec(block)?.[0];
  const location = / {4}location \/ \{[\s\S]*?\n {4}\}/.exec(block)?.[0];
  if (!upstream || !location) throw new Error('the README scale-upstream block lost its upstream or its location /');
  const first = /^([ \t]*)server 127\.0\.0\.1:\d+;$/m.exec(upstream);
  if (!first) throw new Error('the README scale-upstream block lists no "server 127.0.0.1:PORT;"');
  const servers = ports.map((p) => `\n${first[1]}server 127.0.0.1:${p};`).join('');
  const pointed = upstream.replace(/(\s*server 127\.0\.0\.1:\d+;)+/, servers);
  return { http: pointed, server: location };
}
