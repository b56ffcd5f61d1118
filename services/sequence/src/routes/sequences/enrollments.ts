import { documentView, pagedAnswer, requireScope } from '@lead-capture/kit';
import type { FastifyPluginAsync } from 'fastify';
import type { EnrollmentDocument } from '../../enrollments.js';
import {
  ENROLLMENT_LIST,
  ENROLLMENT_LIST_QUERY,
  type EnrollmentListQuery,
  errorResponses,
  SEQUENCE_PARAMS,
  type SequenceParams,
  TAGS,
} from '../../schemas.js';
import type { SequenceRoutesOptions } from './index.js';

function enrollmentView(enrollment: EnrollmentDocument) {
  return {
    ...documentView(enrollment, ['leadId', 'status', 'currentStep', 'nextStepAt', 'paused', 'enrolledAt']),
    ...(enrollment.stoppedReason ? { stoppedReason: enrollment.stoppedReason } : {}),
    lead: {
      firstName: enrollment.lead.firstName ?? null,
      lastName: enrollment.lead.lastName ?? null,
      email: enrollment.lead.email ?? null,
      company: enrollment.lead.company ?? null,
    },
  };
}

/** GET /api/sequences/<id>/enrollments: who is enrolled and where they stand, newest first. */
export const enrollmentRoutes: FastifyPluginAsync<SequenceRoutesOptions> = async (app, { catalog }) => {
  app.get<{ Params: SequenceParams; Querystring: EnrollmentListQuery }>(
    '/api/sequences/:id/enrollments',
    {
      onRequest: requireScope('read'),
      schema: {
        tags: TAGS,
        summary: 'The enrolments of a sequence, newest first',
        params: SEQUENCE_PARAMS,
        querystring: ENROLLMENT_LIST_QUERY,
        response: { 200: ENROLLMENT_LIST, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const { enrollments, total } = await catalog.enrollmentsOf(request.params.id, request.query);
      return pagedAnswer(enrollments, total, request.query, enrollmentView);
    },
  );
};
