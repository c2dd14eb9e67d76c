/** The local server http_request fetches in scenario 9: GET / answers a short text body. */
import { createServer } from 'node:http';
import { addressOf, ready } from './common.mjs';

const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '12' });
  res.end('hello world\n');
});
server.listen(0, '127.0.0.1', () => ready(addressOf(server)));
