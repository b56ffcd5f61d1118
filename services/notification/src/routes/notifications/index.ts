import { documentView, pagedAnswer, requireScope } from '@lead-capture/kit';
import type { FastifyPluginAsync } from 'fastify';
import type { MailDocument, NotificationMails } from '../../mails.js';
import { errorResponses, MAIL_LIST, MAIL_LIST_QUERY, type MailListQuery, TAGS } from '../../schemas.js';

export interface MailRoutesOptions {
  mails: NotificationMails;
}

function mailView(mail: MailDocument) {
  return {
    ...documentView(mail, ['leadId', 'to', 'subject', 'status', 'createdAt', 'sentAt']),
    ...(mail.status === 'failed' && mail.error ? { error: mail.error } : {}),
  };
}

/** GET /api/notifications: every team mail, newest first. */
export const mailRoutes: FastifyPluginAsync<MailRoutesOptions> = async (app, { mails }) => {
  app.get<{ Querystring: MailListQuery }>(
    '/api/notifications',
    {
      onRequest: requireScope('read'),
      schema: {
        tags: TAGS,
        summary: 'Team notification mails, newest first',
        querystring: MAIL_LIST_QUERY,
        response: { 200: MAIL_LIST, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const { mails: found, total } = await mails.list(request.query);
      return pagedAnswer(found, total, request.query, mailView);
    },
  );
};
