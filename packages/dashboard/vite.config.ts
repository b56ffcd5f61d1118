import { defineConfig } from 'vite';

/**
 * `pnpm --filter @lead-capture/dashboard build` -> dist/: index.html and content-hashed files under
 * assets/ (the gateway caches those for a year). `pnpm --filter @lead-capture/dashboard dev` serves the
 * sources with /api proxied to a running `pnpm start` (DASHBOARD_API_URL, default localhost:3000).
 */
export default defineConfig({
  root: 'app',
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: '../dist',
    emptyOutDir: true,
    target: 'es2022',
    // The CSP allows no inline script or style: every asset is a file.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
  },
  server: {
    proxy: {
      '/api': { target: process.env.DASHBOARD_API_URL ?? 'http://localhost:3000', changeOrigin: true },
    },
  },
});
