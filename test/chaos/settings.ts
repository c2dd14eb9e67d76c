/** The chaos run's fixed settings, shared by the run and the test that holds docs/scale-out.md to them. */

/** Gateway processes behind nginx. */
export const INSTANCES = 3;
/** calls.owner_lease_s of every instance. */
export const LEASE_S = 5;
/** One instance is SIGKILLed this often. */
export const KILL_EVERY_S = 6;
/** Seconds per variant of the long form (`npm run chaos`); a run this long or longer writes CHAOS.md. */
export const LONG_SECONDS = 120;
/** The variants: what Redis keeps across its restart. */
export const VARIANTS = [
  { name: 'volatile', persist: false },
  { name: 'appendonly', persist: true },
] as const;
