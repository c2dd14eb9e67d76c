/** Baseline (a): a raw node:http server answering the echo call with the same JSON. */
import { createServer } from 'node:http';
import { addressOf, echoResponse, ready } from './common.mjs';

const server = createServer((req, res) => {
  const startedAt = performance.now();
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.stringify(echoResponse(JSON.parse(Buffer.concat(chunks).toString('utf8')), startedAt));
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => ready(addressOf(server)));
