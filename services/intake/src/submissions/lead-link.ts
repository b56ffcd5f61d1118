import type { Collection } from '@lead-capture/docstore';
import type { GroupHandlers } from '@lead-capture/kit';
import type { SubmissionDoc } from '../collections.js';

/**
 * Handler of the intake.lead.link group: records on the submission the lead it became (or
 * duplicated). Idempotent; a lead.captured of a submission the intake does not hold (a CSV import
 * row, or one past retention) changes nothing.
 */
export function leadLinkHandler(submissions: Collection<SubmissionDoc>): GroupHandlers<'intake.lead.link'> {
  return {
    'lead.captured': async (event) => {
      const { submissionId, leadId, isDuplicate } = event.data;
      await submissions.updateOne(
        { _id: submissionId, outcome: { $in: ['accepted', 'lead_created', 'duplicate_lead'] } },
        { $set: { outcome: isDuplicate ? 'duplicate_lead' : 'lead_created', leadId } },
      );
    },
  };
}
