import { registerSettingsRoutes, requireRole, requireScope } from '@lead-capture/kit';
import type { FastifyPluginAsync } from 'fastify';
import { SETTINGS, TAGS } from '../../schemas.js';
import { type NotificationSettings, normaliseSettings, type SettingsStore } from '../../settings.js';

export interface SettingsRoutesOptions {
  settings: SettingsStore;
}

/**
 * /api/settings/notifications: any identity reads; replacing needs an admin with full scope: the
 * recipients receive every matching lead's personal data, so a member may not choose them.
 */
export const settingsRoutes: FastifyPluginAsync<SettingsRoutesOptions> = async (app, { settings }) => {
  registerSettingsRoutes<NotificationSettings>(app, {
    url: '/api/settings/notifications',
    tags: TAGS,
    schema: SETTINGS,
    replaceGuard: [requireScope('full'), requireRole('admin')],
    current: () => settings.get(),
    currentSummary: 'Who is e-mailed about which scored leads',
    replace: (body, userId) => settings.replace(normaliseSettings(body), userId),
    replaceSummary: 'Replace the notification settings (admin)',
    replaceDescription: 'The recipients receive the personal data of every matching lead: admins only.',
    // The stored settings as answered (normalised): the recipients who now receive lead data.
    audit: {
      action: 'notification_settings.replace',
      fields: ['enabled', 'recipients', 'qualifications', 'sourceIds'],
    },
  });
};
