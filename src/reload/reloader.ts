/**
 * Reloading the configuration (SIGHUP, POST /admin/reload): read the config
 * again, refuse it as a whole when it is invalid (the running one keeps
 * serving), else put the live keys in force for new calls and report the
 * keys that need a restart. One reload at a time; each is logged.
 */
import type { GatewayConfig } from '../config/index.js';
import type { Logger } from '../engine/index.js';
import { configChanges } from './changes.js';

export interface ReloadApplied {
  status: 'reloaded';
  /** Config keys whose new value is in force for new calls. */
  changed: string[];
  /** Config keys that changed but need a restart; the running value is kept. */
  restart_needed: string[];
  /** Sessions and streams ended because the credential that opened them was removed or changed. */
  sessions_ended: number;
}

export interface ReloadRefused {
  status: 'refused';
  /** Why, in the words start-up would use for the same config. */
  error: string;
}

export type ReloadOutcome = ReloadApplied | ReloadRefused;

export interface ReloaderOptions {
  /** Read and validate the config again; undefined when the gateway was not started from a file. */
  load: (() => Promise<GatewayConfig>) | undefined;
  /** The config in force now. */
  running: () => GatewayConfig;
  /**
   * Build everything `effective` needs that can fail (plugins started, tokens read, rules checked) without
   * touching what serves; return the function that swaps it in. Throws when the config is unusable.
   */
  prepare: (effective: GatewayConfig) => Promise<() => { sessionsEnded: number | Promise<number> }>;
  logger: Logger;
}

export const NO_CONFIG_FILE =
  'this gateway was not started from a config file, so there is nothing to re-read; start it with --config FILE (or A2E_CONFIG) to reload';

export class Reloader {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: ReloaderOptions) {}

  /** Reload once the reloads asked for before it are done. Never throws. */
  reload(trigger: string): Promise<ReloadOutcome> {
    const next = this.queue.then(() => this.once(trigger));
    this.queue = next;
    return next;
  }

  private async once(trigger: string): Promise<ReloadOutcome> {
    const { logger } = this.options;
    try {
      if (!this.options.load) throw new Error(NO_CONFIG_FILE);
      const loaded = await this.options.load();
      const changes = configChanges(this.options.running(), loaded);
      const commit = await this.options.prepare(changes.effective);
      // Swapped in synchronously; with store.kind redis the sessions of removed tokens end in Redis after.
      const sessionsEnded = await commit().sessionsEnded;
      const outcome: ReloadApplied = {
        status: 'reloaded',
        changed: changes.applied,
        restart_needed: changes.restartNeeded,
        sessions_ended: sessionsEnded,
      };
      logger.info(
        { trigger, changed: outcome.changed, restart_needed: outcome.restart_needed, sessions_ended: sessionsEnded },
        'config reloaded',
      );
      if (outcome.restart_needed.length > 0) {
        logger.warn(
          { restart_needed: outcome.restart_needed },
          `config reload: ${outcome.restart_needed.join(', ')} changed but need a restart; the running values are kept`,
        );
      }
      return outcome;
    } catch (err) {
      const error = (err as Error).message;
      logger.error({ trigger, error }, `config reload refused, the running config keeps serving: ${error}`);
      return { status: 'refused', error };
    }
  }
}
