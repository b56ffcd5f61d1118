/** Where `pnpm --filter @lead-capture/dashboard build` writes the dashboard (index.html, assets/). */
export declare const DASHBOARD_DIST_DIR: string;
