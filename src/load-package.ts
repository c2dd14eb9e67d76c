/**
 * A package the gateway loads at its first use rather than at start-up (undici, prom-client, jose): by `require`,
 * which loads an ES-module package too (Node ≥ 20.19), not by `import()`, which code compiled from the compile
 * cache cannot run (src/native-import.ts).
 *
 * @example
 * let undici: Promise<typeof import('undici')> | undefined;
 * const loadUndici = () => (undici ??= loadPackage<typeof import('undici')>('undici'));
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The package, loaded (and its errors thrown) asynchronously, as `import()` would. */
export const loadPackage = <T>(name: string): Promise<T> => Promise.resolve().then(() => require(name) as T);
