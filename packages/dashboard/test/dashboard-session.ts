import { randomUUID } from 'node:crypto';
import { waitFor } from '@lead-capture/testing';
import { expect } from 'vitest';
import { useDashboard } from './harness.js';

// What the dashboard-*.browser.test.ts files share.

export interface Source {
  id: string;
  webhookUrl: string;
}
export interface LeadList {
  data: Array<{ id: string; email: string | null; isDuplicate: boolean; score: number }>;
}

export const uniqueEmail = (label: string) => `${label}-${randomUUID().slice(0, 8)}@example.com`;

/**
 * useDashboard with a source named "Browser tests" made before the browser opens, and the leads
 * posted to it: the app allows outbound webhooks to a local http receiver.
 */
export function useDashboardWithSource(options: { signIn?: boolean } = {}) {
  let source: Source;
  const session = useDashboard({
    // The outbound webhook test's receiver is a local http URL.
    env: { OUTBOUND_WEBHOOK_ALLOW_HTTP: 'true', OUTBOUND_WEBHOOK_ALLOW_PRIVATE: 'true' },
    prepare: async () => {
      source = await session.api.call<Source>('POST', '/api/sources', { name: 'Browser tests' });
    },
    actionTimeoutMs: 10_000,
    signIn: options.signIn,
  });

  return {
    session,
    get source(): Source {
      return source;
    },
    async postLead(fields: Record<string, string>): Promise<void> {
      const response = await fetch(source.webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(fields),
      });
      expect(response.status).toBe(200);
    },

    async leadByEmail(email: string) {
      return waitFor(`the lead ${email} to be listed`, async () => {
        const list = await session.api.call<LeadList>(
          'GET',
          `/api/leads?search=${encodeURIComponent(email)}`,
        );
        return list.data.find((lead) => lead.email === email);
      });
    },
  };
}
