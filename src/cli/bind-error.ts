/** Why the gateway could not listen, said so that the person who ran the command knows what to change. */
export function bindError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return new Error(`port ${port} on ${host} is already in use; pick another with --port`);
  if (code === 'EADDRNOTAVAIL') return new Error(`cannot bind to ${host}: no such local address; check --host`);
  if (code === 'EACCES') return new Error(`not allowed to bind ${host}:${port}; use a port above 1023`);
  return err;
}
