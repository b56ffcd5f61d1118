import { waitFor } from '@lead-capture/testing';
import { describe, expect, it } from 'vitest';
import {
  ADMIN,
  type CreatedSource,
  type ListedLead,
  PROCESSED_WITHIN_MS,
  postWebhook,
  runTag,
} from './support/api.js';
import { apiRuntimes, useApiRuntime } from './support/api-runtimes.js';

/**
 * The API contract over HTTP against both runtimes (support/api-runtimes.ts), part two: sign-in and
 * API keys, managing sources, pipelines and settings. The leads' part is api-leads.test.ts.
 */
describe.each(apiRuntimes('e2e-api-admin'))('the API over HTTP, $kind runtime', (runtime) => {
  const run = useApiRuntime(runtime);

  describe('authentication', () => {
    it('refuses a missing token, a wrong password and a bad key with 401 {error}', async () => {
      const anonymous = await fetch(`${run.url()}/api/leads`);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toEqual({ error: expect.any(String) });
      const wrong = await fetch(`${run.url()}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: ADMIN.email, password: 'not-the-password' }),
      });
      expect(wrong.status).toBe(401);
      const badKey = await fetch(`${run.url()}/api/leads`, { headers: { 'x-api-key': 'lck_nothing' } });
      expect(badKey.status).toBe(401);
    });

    it('issues API keys: a read key reads and is refused writes with 403, a deleted key is refused', async () => {
      const created = await run.api.request<{ id: string; key: string }>('POST', '/api/api-keys', {
        label: `read ${run.tag}`,
        scope: 'read',
      });
      expect(created.status).toBe(201);
      const headers = { 'x-api-key': created.body.key, 'content-type': 'application/json' };
      expect((await fetch(`${run.url()}/api/sources`, { headers })).status).toBe(200);
      const write = await fetch(`${run.url()}/api/sources`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'nope' }),
      });
      expect(write.status).toBe(403);
      expect((await run.api.get<unknown[]>('/api/api-keys')).status).toBe(200);
      const patched = await run.api.request('PATCH', `/api/api-keys/${created.body.id}`, {
        label: 'renamed',
      });
      expect(patched.status).toBe(200);
      expect((await run.api.request('DELETE', `/api/api-keys/${created.body.id}`)).status).toBe(204);
      expect((await fetch(`${run.url()}/api/sources`, { headers })).status).toBe(401);
    });
  });

  describe('sources and the inbound webhook', () => {
    it('shows the first admin as the creator of a source, though the gateway created it before any service ran', async () => {
      // The gateway publishes user.created for the first admin when it starts, before any service
      // has connected: the event must wait in their queues, as every later event of the chain does.
      const admin = { id: run.api.user.id, name: 'Admin', email: ADMIN.email };
      let createdBy: unknown;
      await waitFor(
        'the source service to show the admin as createdBy',
        async () => {
          const { body } = await run.api.get<{ id: string; createdBy: unknown }[]>('/api/sources');
          createdBy = body.find(({ id }) => id === run.source.id)?.createdBy;
          return JSON.stringify(createdBy) === JSON.stringify(admin) ? true : undefined;
        },
        PROCESSED_WITHIN_MS,
        () => JSON.stringify(createdBy),
      );
    });

    it('refuses an unknown token with 404 and an empty payload with 400', async () => {
      expect(await postWebhook(run.url(), '/api/webhooks/not-a-token', { email: 'x@example.com' })).toEqual({
        status: 404,
        body: { error: 'Unknown webhook token' },
      });
      const empty = await postWebhook(run.url(), `/api/webhooks/${run.source.webhookToken}`, {});
      expect(empty.status).toBe(400);
    });

    it('lists, reads, renames, rotates and deletes a source', async () => {
      const other = await run.api.createSource(`Temporary ${run.tag}`);
      expect((await run.api.get<CreatedSource[]>('/api/sources')).body.map(({ id }) => id)).toContain(
        other.id,
      );
      expect((await run.api.get<CreatedSource>(`/api/sources/${other.id}`)).body.webhookUrl).toBe(
        other.webhookUrl,
      );
      const renamed = await run.api.request<CreatedSource>('PUT', `/api/sources/${other.id}`, {
        name: 'Renamed',
      });
      expect(renamed).toMatchObject({ status: 200, body: { name: 'Renamed' } });
      const rotated = await run.api.request<{ webhookToken: string }>(
        'POST',
        `/api/sources/${other.id}/regenerate-token`,
      );
      expect(rotated.status).toBe(200);
      expect(rotated.body.webhookToken).not.toBe(other.webhookToken);
      expect((await run.api.request('DELETE', `/api/sources/${other.id}`)).status).toBe(204);
      expect((await run.api.get(`/api/sources/${other.id}`)).status).toBe(404);
      const tooLong = await run.api.request('POST', '/api/sources', { name: 'x'.repeat(256) });
      expect(tooLong.status).toBe(400);
    });

    it('after deleting a source, refuses its webhook at once and keeps its leads, shown with the source deleted', async () => {
      const doomed = await run.api.createSource(`Deleted ${run.tag}`);
      const doomedTag = runTag('deleted');
      for (const name of ['one', 'two']) {
        const delivery = await postWebhook(run.url(), `/api/webhooks/${doomed.webhookToken}`, {
          email: `${name}.${doomedTag}@example.com`,
        });
        expect(delivery.status).toBe(200);
      }
      const before = await run.api.leadsListed(doomedTag, 2);

      expect((await run.api.request('DELETE', `/api/sources/${doomed.id}`)).status).toBe(204);
      const refused = await postWebhook(run.url(), `/api/webhooks/${doomed.webhookToken}`, {
        email: `late.${doomedTag}@example.com`,
      });
      expect(refused).toEqual({ status: 404, body: { error: 'Unknown webhook token' } });

      // The lead service learns of the deletion from run.source.deleted.
      let seen: ListedLead[] = [];
      await waitFor(
        'the leads to show their source as deleted',
        async () => {
          seen = await run.api.searchLeads(doomedTag);
          return seen.every((lead) => lead.source.deleted) ? true : undefined;
        },
        PROCESSED_WITHIN_MS,
        () => JSON.stringify(seen.map((lead) => lead.source)),
      );
      expect(seen.map((lead) => lead.id).sort()).toEqual(before.map((lead) => lead.id).sort());
      const detail = await run.api.leadDetail(before[0]?.id ?? '');
      expect(detail.source).toEqual({ id: doomed.id, name: doomed.name, deleted: true });
    });
  });

  describe('pipelines, settings, sequences, notifications', () => {
    it('creates, reads, updates and deletes a pipeline; the default cannot be deleted', async () => {
      const stages = [
        { name: 'New', color: '#336699', order: 0 },
        { name: 'Won', color: '#00aa00', order: 1, isWin: true },
      ];
      const created = await run.api.request<{ id: string; stages: { id: string }[] }>(
        'POST',
        '/api/pipelines',
        {
          name: `Pipeline ${run.tag}`,
          stages,
        },
      );
      expect(created.status).toBe(201);
      expect((await run.api.get(`/api/pipelines/${created.body.id}`)).status).toBe(200);
      const updated = await run.api.request('PUT', `/api/pipelines/${created.body.id}`, { name: 'Renamed' });
      expect(updated.status).toBe(200);
      expect([200, 204]).toContain(
        (await run.api.request('DELETE', `/api/pipelines/${created.body.id}`)).status,
      );
      const fallback = await run.api.defaultPipeline();
      expect(
        (await run.api.request('DELETE', `/api/pipelines/${fallback.id}`)).status,
      ).toBeGreaterThanOrEqual(400);
      expect((await run.api.request('DELETE', `/api/pipelines/${fallback.id}`)).status).toBeLessThan(500);
    });

    it.each([
      '/api/settings/scoring',
      '/api/settings/notifications',
      '/api/sequences',
      '/api/notifications',
      '/api/users',
    ])('answers GET %s with 200', async (path) => {
      expect((await run.api.get(path)).status).toBe(200);
    });
  });
});
