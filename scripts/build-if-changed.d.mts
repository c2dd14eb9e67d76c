/** Types of scripts/build-if-changed.mjs, for the test that checks `npm start`'s build step. */

/** Why the package at `root` needs a build (a sentence), or null when dist/ is newer than everything it is built from. */
export function buildReason(root: string): string | null;
