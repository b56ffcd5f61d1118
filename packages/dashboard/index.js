import { fileURLToPath } from 'node:url';

// Plain JavaScript (typed by index.d.ts): the services import this package at run time, under tsx
// and under plain node from the build (see scripts/build.ts), and nothing here needs compiling.

/** Where `pnpm --filter @lead-capture/dashboard build` writes the dashboard (index.html, assets/). */
export const DASHBOARD_DIST_DIR = fileURLToPath(new URL('./dist', import.meta.url));
