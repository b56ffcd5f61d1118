import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, relative, resolve, sep } from 'node:path';
import fastifyStatic from '@fastify/static';
import {
  HEALTH_PATHS,
  INTERNAL_PATH_PREFIX,
  type Logger,
  notFound,
  redactUrl,
  unavailable,
} from '@lead-capture/kit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { METRICS_PATH } from './metrics.js';
import { DOCS_PREFIX } from './routing/openapi-document.js';

/** Vite writes every script, style and image under here with a content hash in its name. */
export const DASHBOARD_ASSETS_PREFIX = '/assets';

/** Hashed names never change content: browsers and proxies keep them for a year without asking. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** index.html names the current hashed files: always revalidated, so a new build shows at once. */
const REVALIDATE = 'no-cache';

/**
 * Never client routes: the API, the internal routes, and the operational paths. /metrics is one
 * whether or not this process serves it (METRICS_TOKEN unset or METRICS_PORT set): unserved, it
 * must stay a 404, not become the dashboard's index.html with 200 and no authentication.
 */
const NOT_DASHBOARD_PREFIXES = [
  '/api',
  INTERNAL_PATH_PREFIX.replace(/\/$/, ''),
  METRICS_PATH,
  DOCS_PREFIX,
  ...HEALTH_PATHS,
];

function isUnder(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * Whether a GET/HEAD path is the dashboard's: its assets, and every client route (any path outside
 * /api and /internal without a file extension), which the single-page app resolves itself. The
 * guard lets these through without authentication or the API's rate limit: they are the same
 * static files for everyone, and the app's data calls are authenticated and counted.
 */
export function isDashboardPath(method: string, path: string): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  if (NOT_DASHBOARD_PREFIXES.some((prefix) => isUnder(path, prefix))) return false;
  return isUnder(path, DASHBOARD_ASSETS_PREFIX) || extname(path) === '';
}

/**
 * The asset a request names, as a path relative to the dashboard's folder, or null when it is not
 * one: resolved and confined to the assets folder before anything touches the file system, so a
 * path leading outside (`..%2F..%2Fetc%2Fpasswd`), a dotfile or a folder answers the same 404 as a
 * missing asset, whether or not something exists there.
 */
async function assetPathOf(dir: string, file: string): Promise<string | null> {
  if (file === '' || file.includes('\0')) return null;
  const assets = resolve(dir, 'assets');
  const path = resolve(assets, file);
  if (!path.startsWith(`${assets}${sep}`)) return null;
  const inside = relative(assets, path);
  if (inside.split(sep).some((segment) => segment.startsWith('.'))) return null;
  const found = await stat(path).catch(() => null);
  return found?.isFile() ? join('assets', inside) : null;
}

function notFoundFor(request: FastifyRequest) {
  return notFound(`Not found: ${request.method} ${redactUrl(request.url.split('?', 1)[0] ?? '')}`);
}

/**
 * The dashboard's build (packages/dashboard/dist) at `/`: hashed assets cached for a year,
 * index.html revalidated, and index.html for every client route (SPA fallback), never for /api,
 * /internal or a missing file. Routes more specific than `/*` (the API, health, docs, metrics) keep
 * answering first. When the build is missing (installed with --ignore-scripts), `/` answers 503
 * saying how to build it, and the API works as before.
 */
export async function registerDashboard(
  app: FastifyInstance,
  options: { dir: string; logger: Logger },
): Promise<void> {
  const { dir, logger } = options;
  const built = existsSync(join(dir, 'index.html'));
  if (!built) {
    logger.warn(
      { dir },
      'The dashboard is not built; / answers 503 (run: pnpm --filter @lead-capture/dashboard build)',
    );
  }
  await app.register(fastifyStatic, {
    root: dir,
    serve: false,
    // Our own Cache-Control per file kind; ETag and Last-Modified for revalidation.
    cacheControl: false,
    etag: true,
    lastModified: true,
    dotfiles: 'deny',
  });

  const sendIndex = (reply: FastifyReply) =>
    reply.header('cache-control', REVALIDATE).type('text/html; charset=utf-8').sendFile('index.html');

  app.get(
    `${DASHBOARD_ASSETS_PREFIX}/*`,
    { config: { public: true }, schema: { hide: true } },
    async (request, reply) => {
      const asset = built ? await assetPathOf(dir, (request.params as { '*': string })['*']) : null;
      if (asset === null) throw notFoundFor(request);
      return reply.header('cache-control', IMMUTABLE).sendFile(asset);
    },
  );

  // Every other GET that no route claims: a client route of the app, or a 404 as before. The 404
  // goes through the app's not-found handler, so it is logged and counted as unmatched (metrics'
  // route="unmatched"), not as a hit of this route.
  app.get('/*', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const path = request.url.split('?', 1)[0] ?? '';
    if (!isDashboardPath(request.method, path)) return reply.callNotFound();
    if (!built)
      throw unavailable('The dashboard is not built: run pnpm --filter @lead-capture/dashboard build');
    return sendIndex(reply);
  });
}
