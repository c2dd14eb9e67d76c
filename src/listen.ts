/**
 * Listening: the HTTP server of a built gateway — bind (with the bind
 * safety check), then on close stop accepting, let the gateway drain its
 * calls while open streams flush, and drop what is left.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { ConfigError, type GatewayConfig } from './config/index.js';
import type { Logger } from './engine/index.js';
import { checkBind, isLoopbackAddress } from './security/index.js';

export interface ListenAddress {
  /** `http://host:port` plus `server.base_path`. */
  url: string;
  host: string;
  port: number;
}

export interface HttpListenerOptions {
  fetch: (request: Request) => Response | Promise<Response>;
  config: GatewayConfig;
  logger: Logger;
  /** Told once bound whether the address is loopback (Host header checks depend on it). */
  onBound?: (loopback: boolean) => void;
}

/** What closing asks of the gateway, in order. */
export interface Drain {
  /** Let running calls finish (within the grace period) and flush their last answers; the server no longer accepts. */
  calls(): Promise<void>;
  /** Once every connection is closed: stop plugins, timers, files. */
  release(): Promise<void>;
}

export class HttpListener {
  private server: Server | undefined;

  constructor(private readonly options: HttpListenerOptions) {}

  /** Start listening on `port`:`host`; resolves with the real address. */
  listen(port: number, host: string): Promise<ListenAddress> {
    const { config, logger } = this.options;
    const requestTimeout = config.server.request_timeout_s * 1000;
    const s = createAdaptorServer({
      fetch: this.options.fetch,
      serverOptions: {
        // Node's defaults (300 s, checked every 30 s) let slow clients hold connections for minutes.
        requestTimeout,
        headersTimeout: Math.min(config.server.headers_timeout_s * 1000, requestTimeout),
        connectionsCheckingInterval: 1000,
      },
    }) as Server;
    this.server = s;
    return new Promise((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, host, () => {
        s.off('error', reject);
        const address = s.address() as AddressInfo;
        const bind = checkBind(address.address, config);
        if (bind.error) {
          s.close();
          reject(new ConfigError(bind.error));
          return;
        }
        if (bind.warning) logger.warn({ address: address.address }, bind.warning);
        this.options.onBound?.(isLoopbackAddress(address.address));
        const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
        resolve({
          url: `http://${shownHost}:${address.port}${config.server.base_path}`,
          host: address.address,
          port: address.port,
        });
      });
    });
  }

  /** Stop accepting, drain, close connections, release (also when never listening). */
  async close(drain: Drain): Promise<void> {
    const s = this.server;
    const serverClosed = s ? new Promise<void>((resolve) => s.close(() => resolve())) : Promise.resolve();
    s?.closeIdleConnections();
    await drain.calls();
    // Streams end as their calls settle; give them a moment to flush, then drop what is left.
    await Promise.race([serverClosed, new Promise((r) => setTimeout(r, 1000).unref())]);
    s?.closeAllConnections();
    await serverClosed;
    await drain.release();
  }
}
