/**
 * Builds the console (GET /ui) into dist/ui: one HTML page, one script, one
 * stylesheet, all served by the gateway itself (src/routes/pages/ui.ts).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  // Relative asset URLs; the route rewrites them for the page's URL, so any server.base_path works.
  base: './',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/ui', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // No inline preload helper: the CSP allows only this origin's script files.
    modulePreload: false,
    sourcemap: false,
    reportCompressedSize: false,
  },
});
