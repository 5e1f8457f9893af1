/**
 * Build of the dashboard: `vite build ui` (root `ui/`) writes static files to `dist-ui/`, served by
 * `rayshift dashboard` (and, once wired, by the API server under `/ui/`). Preact's automatic JSX
 * runtime through esbuild; relative asset URLs so the app works under any path prefix.
 */
import { defineConfig } from 'vite';

export default defineConfig({
  base: './',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: '../dist-ui',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    modulePreload: { polyfill: false },
  },
});
