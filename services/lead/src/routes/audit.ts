import { notAudited } from '@lead-capture/kit';

/**
 * The writes of the Leads API that change one lead are not in the gateway's audit log: they change
 * lead data, not who may act or where lead data goes, and the lead's timeline records each with
 * who made it. Bulk changes (POST /api/leads/bulk) are audited.
 */
export const LEAD_CHANGE = notAudited("A change to a lead: the lead's timeline records it and who made it");
