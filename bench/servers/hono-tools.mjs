/**
 * Baseline for scenario 9: bare Hono routes doing what the gateway's native
 * tools do, with no checks at all, answering the same tool/call/resp JSON:
 *   POST /read  {arguments: {path}} → readFile(root/path, 'utf8')
 *   POST /list  {arguments: {path}} → readdir(root/path, {withFileTypes: true})
 *   POST /list-sizes {arguments: {path}} → the same, and lstat of each file for its size (list_dir's with sizes: true)
 *   POST /fetch {arguments: {url}}  → undici.request(url), body as text
 * BENCH_WORKSPACE is the root the paths are taken from.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { ready, toolResponse } from './common.mjs';

const root = process.env.BENCH_WORKSPACE ?? process.cwd();
const app = new Hono();
app.post('/read', async (c) => {
  const startedAt = performance.now();
  const req = await c.req.json();
  const content = await readFile(join(root, req.arguments.path), 'utf8');
  return c.json(toolResponse(req, 'read_file', { path: req.arguments.path, encoding: 'utf8', content }, startedAt));
});
app.post('/list', async (c) => {
  const startedAt = performance.now();
  const req = await c.req.json();
  const dirents = await readdir(join(root, req.arguments.path), { withFileTypes: true });
  const entries = dirents.map((d) => ({
    path: `${req.arguments.path}/${d.name}`,
    type: d.isDirectory() ? 'dir' : d.isFile() ? 'file' : 'other',
  }));
  return c.json(toolResponse(req, 'list_dir', { path: req.arguments.path, entries }, startedAt));
});
app.post('/list-sizes', async (c) => {
  const startedAt = performance.now();
  const req = await c.req.json();
  const dir = join(root, req.arguments.path);
  const dirents = await readdir(dir, { withFileTypes: true });
  const entries = await Promise.all(
    dirents.map(async (d) => ({
      path: `${req.arguments.path}/${d.name}`,
      type: d.isDirectory() ? 'dir' : d.isFile() ? 'file' : 'other',
      size: d.isFile() ? (await lstat(join(dir, d.name))).size : null,
    })),
  );
  return c.json(toolResponse(req, 'list_dir', { path: req.arguments.path, entries }, startedAt));
});
app.post('/fetch', async (c) => {
  const startedAt = performance.now();
  const req = await c.req.json();
  const res = await request(req.arguments.url);
  const body = await res.body.text();
  return c.json(toolResponse(req, 'http_request', { status: res.statusCode, headers: res.headers, body }, startedAt));
});
serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => ready(`http://127.0.0.1:${info.port}`));
