import { pickFields, requireRole, requireScope } from '@lead-capture/kit';
import type { FastifyPluginAsync } from 'fastify';
import { errorResponses, SETTINGS, TAGS } from '../../schemas.js';
import { type NotificationSettings, normaliseSettings, type SettingsStore } from '../../settings.js';

export interface SettingsRoutesOptions {
  settings: SettingsStore;
}

/**
 * /api/settings/notifications: any identity reads; replacing needs an admin with full scope: the
 * recipients receive every matching lead's personal data, so a member may not choose them.
 */
export const settingsRoutes: FastifyPluginAsync<SettingsRoutesOptions> = async (app, { settings }) => {
  app.get(
    '/api/settings/notifications',
    {
      preHandler: requireScope('read'),
      schema: {
        tags: TAGS,
        summary: 'Who is e-mailed about which scored leads',
        response: { 200: SETTINGS, ...errorResponses(401) },
      },
    },
    async () => settings.get(),
  );

  app.put<{ Body: NotificationSettings }>(
    '/api/settings/notifications',
    {
      config: {
        // The stored settings as answered (normalised): the recipients who now receive lead data.
        audit: {
          action: 'notification_settings.replace',
          change: ({ responseBody, requestBody }) =>
            pickFields(responseBody ?? requestBody, ['enabled', 'recipients', 'qualifications', 'sourceIds']),
        },
      },
      preHandler: [requireScope('full'), requireRole('admin')],
      schema: {
        tags: TAGS,
        summary: 'Replace the notification settings (admin)',
        description: 'The recipients receive the personal data of every matching lead: admins only.',
        body: SETTINGS,
        response: { 200: SETTINGS, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => settings.replace(normaliseSettings(request.body), request.identity!.userId),
  );
};
