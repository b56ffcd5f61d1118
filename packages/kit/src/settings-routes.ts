import type { FastifyInstance } from 'fastify';
import { pickFields } from './audit.js';
import { errorResponses } from './errors.js';
import { type IdentityGuard, requireScope } from './guards.js';

export interface SettingsRoutesOptions<TSettings> {
  /** GET answers the settings in force (any identity); PUT replaces them. */
  url: string;
  tags: string[];
  /** The settings as GET answers them, PUT takes them and PUT answers them. */
  schema: object;
  /** Who may replace them. */
  replaceGuard: IdentityGuard | IdentityGuard[];
  current(): Promise<TSettings>;
  currentSummary: string;
  /** Checks the body, stores it as this user's change and answers the settings stored. */
  replace(body: TSettings, userId: string): Promise<TSettings>;
  replaceSummary: string;
  replaceDescription?: string;
  /** The audit log records these fields of the stored settings (of the request when none is answered). */
  audit: { action: string; fields: readonly string[] };
}

/** GET and PUT of one settings document (`/api/settings/<name>`), the PUT audited. */
export function registerSettingsRoutes<TSettings>(
  app: FastifyInstance,
  options: SettingsRoutesOptions<TSettings>,
): void {
  const { url, tags, schema, audit, replaceDescription } = options;

  app.get(
    url,
    {
      onRequest: requireScope('read'),
      schema: { tags, summary: options.currentSummary, response: { 200: schema, ...errorResponses(401) } },
    },
    async () => options.current(),
  );

  app.put(
    url,
    {
      config: {
        audit: {
          action: audit.action,
          change: ({ responseBody, requestBody }) => pickFields(responseBody ?? requestBody, audit.fields),
        },
      },
      onRequest: options.replaceGuard,
      schema: {
        tags,
        summary: options.replaceSummary,
        ...(replaceDescription === undefined ? {} : { description: replaceDescription }),
        body: schema,
        response: { 200: schema, ...errorResponses(400, 401, 403) },
      },
    },
    // The schema has checked the body.
    async (request) => options.replace(request.body as TSettings, request.identity!.userId),
  );
}
