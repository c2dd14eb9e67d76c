/**
 * A real nginx for end-to-end tests: started on an ephemeral port with a
 * generated config (its own prefix, temp dirs, logs and pid file under a tmp
 * dir, `daemon off`), stopped by the test. Fails with what to install when
 * nginx is missing.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';

const CANDIDATES = ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx', '/usr/local/bin/nginx'];

export function findNginx(): string {
  const found = CANDIDATES.find((p) => existsSync(p));
  if (!found) {
    throw new Error(
      'nginx is not installed, and the end-to-end tests need a real one: install the Debian package "nginx" ' +
        '(apt-get install -y nginx), or run .ci/run, which installs everything in .ci/apt-packages',
    );
  }
  return found;
}

/** A free TCP port on 127.0.0.1 (nginx cannot be told to pick one itself). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Where each documented block the tests run lives (moved from the README into docs/, issue 52). */
const BLOCK_FILES: Record<string, string> = {
  'nginx-location': 'docs/reverse-proxy.md',
  'nginx-config': 'docs/reverse-proxy.md',
  'scale-config': 'docs/scale-out-guide.md',
  'scale-upstream': 'docs/scale-out-guide.md',
};

/** The text of the fenced block between `<!-- NAME:start -->` and `<!-- NAME:end -->` in the page that documents it. */
export async function readmeBlock(name: string, lang: string): Promise<string> {
  const file = BLOCK_FILES[name] ?? 'README.md';
  const text = await readFile(new URL(`../../${file}`, import.meta.url), 'utf8');
  const m = new RegExp(`<!-- ${name}:start -->\\s*\`\`\`${lang}\\n([\\s\\S]*?)\`\`\`\\s*<!-- ${name}:end -->`).exec(
    text,
  );
  if (!m) throw new Error(`${file} has no \`\`\`${lang} block between <!-- ${name}:start --> and <!-- ${name}:end -->`);
  return m[1]!;
}

/** The nginx `location` block documented in docs/reverse-proxy.md (between its nginx-location markers), proxying to `upstreamPort`. */
export async function readmeLocationBlock(upstreamPort: number): Promise<string> {
  const block = await readmeBlock('nginx-location', 'nginx');
  if (!block.includes('http://127.0.0.1:8080/'))
    throw new Error('the documented nginx block no longer proxies to http://127.0.0.1:8080/');
  return block.replaceAll('http://127.0.0.1:8080/', `http://127.0.0.1:${upstreamPort}/`);
}

/** The gateway config (YAML text) documented next to the nginx block in docs/reverse-proxy.md (its nginx-config markers). */
export const readmeGatewayConfig = (): Promise<string> => readmeBlock('nginx-config', 'yaml');

export interface NginxOptions {
  /** Directives inside `server { … }` (locations). */
  server: string;
  /** Files to serve from the root location: name → content. */
  files?: Record<string, string>;
  /** Extra directives at the main level (e.g. worker_shutdown_timeout). */
  main?: string;
  /** Extra directives inside `http { … }`, outside the server (e.g. an `upstream` block). */
  http?: string;
}

export interface Nginx {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  /** Like `nginx -s reload`: resolves once a new worker has started. */
  reload(): Promise<void>;
  errorLog(): Promise<string>;
  stop(): Promise<void>;
}

export async function startNginx(options: NginxOptions): Promise<Nginx> {
  const bin = findNginx();
  const dir = await mkdtemp(join(tmpdir(), 'a2e-nginx-'));
  const www = join(dir, 'www');
  await mkdir(www);
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'])
    await mkdir(join(dir, 'tmp', sub), { recursive: true });
  for (const [name, content] of Object.entries(options.files ?? {})) await writeFile(join(www, name), content);
  const port = await freePort();
  const errorLogPath = join(dir, 'error.log');
  const conf = `
daemon off;
master_process on;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${errorLogPath} info;
${process.getuid?.() === 0 ? 'user root;' : ''}
${options.main ?? ''}
events { worker_connections 256; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
  types { text/html html; text/javascript js; }
${options.http ?? ''}
  server {
    listen 127.0.0.1:${port};
    ${/location \/ \{/.test(options.server) ? '' : `location / { root ${www}; }`}
${options.server}
  }
}
`;
  const confPath = join(dir, 'nginx.conf');
  await writeFile(confPath, conf);
  const proc: ResultPromise = execa(bin, ['-p', dir, '-c', confPath, '-e', errorLogPath], { reject: false, all: true });
  const errorLog = () => readFile(errorLogPath, 'utf8').catch(() => '');
  let exited = false;
  void proc.then(() => (exited = true));

  // Ready when the port accepts connections; a failed start shows nginx's own message.
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (exited) {
      const r = await proc;
      await rm(dir, { recursive: true, force: true });
      throw new Error(`nginx failed to start (exit ${r.exitCode}): ${r.all}\n${conf}`);
    }
    if (await canConnect(port)) break;
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`nginx did not listen on 127.0.0.1:${port} within 15 s: ${await errorLog()}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }

  const workersStarted = async () => (await errorLog()).match(/start worker process/g)?.length ?? 0;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    errorLog,
    async reload() {
      const before = await workersStarted();
      proc.kill('SIGHUP');
      const until = Date.now() + 15_000;
      while ((await workersStarted()) <= before) {
        if (Date.now() > until) throw new Error(`nginx did not start a new worker after reload: ${await errorLog()}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async stop() {
      if (!exited) {
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
        await proc;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
