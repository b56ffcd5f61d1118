import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DocStore } from '@lead-capture/docstore';
import { createLogger } from '@lead-capture/kit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, type Harness, startIntake, type TestSource, waitFor } from './harness.js';

const GRAPH_TOKEN = 'EAAB-graph-access-token-7c21f0';

/** A leadgen notification as Meta posts it (developers.facebook.com/docs/graph-api/webhooks/reference/page/#leadgen). */
function notification(...leadgenIds: Array<string | number>) {
  return {
    object: 'page',
    entry: leadgenIds.map((leadgenId) => ({
      id: '153125381133',
      time: 1438292065,
      changes: [
        {
          field: 'leadgen',
          value: {
            leadgen_id: leadgenId,
            page_id: 153125381133,
            form_id: 1231231231231,
            ad_id: 1231231231232,
            created_time: 1440120384,
          },
        },
      ],
    })),
  };
}

/** The lead as GET /<leadgen_id> answers it (developers.facebook.com/docs/marketing-api/guides/lead-ads/retrieving). */
function graphLead(leadgenId: string, email: string) {
  return {
    created_time: '2015-02-28T08:49:14+0000',
    id: leadgenId,
    ad_id: '1231231231232',
    form_id: '1231231231231',
    field_data: [
      { name: 'car_make', values: ['Honda'] },
      { name: 'full_name', values: ['Joe Example'] },
      { name: 'email', values: [email] },
      { name: 'phone_number', values: ['+15555550123'] },
    ],
  };
}

const INVALID_TOKEN = {
  error: {
    message: 'Invalid OAuth access token - Cannot parse access token',
    type: 'OAuthException',
    code: 190,
    fbtrace_id: 'AbCdEf123',
  },
};

type Answer = { status: number; body: unknown };

/** A local stand-in for the Graph API: answers each lead id from its queue of answers (the last one repeats). */
class GraphStandIn {
  readonly requests: URL[] = [];
  readonly answers = new Map<string, Answer[]>();
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((request: IncomingMessage, response) => {
      const url = new URL(request.url ?? '/', 'http://graph.test');
      this.requests.push(url);
      const id = url.pathname.split('/').at(-1) ?? '';
      const queue = this.answers.get(id) ?? [];
      const answer = (queue.length > 1 ? queue.shift() : queue[0]) ?? {
        status: 404,
        body: { error: { message: 'Unknown lead', code: 100 } },
      };
      response.writeHead(answer.status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer.body));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v21.0`;
  }

  requestsFor(leadgenId: string): URL[] {
    return this.requests.filter((url) => url.pathname === `/v21.0/${leadgenId}`);
  }

  async close(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

const graph = new GraphStandIn();
let graphUrl: string;
let store: DocStore;
const logLines: string[] = [];
let intake: Harness;

async function start(): Promise<Harness> {
  return startIntake({
    store,
    env: {
      META_GRAPH_API_URL: graphUrl,
      LEADGEN_FETCH_INTERVAL_MS: '20',
      LEADGEN_RETRY_BASE_MS: '50',
      LEADGEN_RETRY_MAX_MS: '200',
    },
    logger: createLogger({
      level: 'trace',
      name: 'intake-test',
      destination: { write: (line) => logLines.push(line) },
    }),
  });
}

beforeAll(async () => {
  graphUrl = await graph.start();
  store = (await freshStore()).store;
  intake = await start();
});

afterAll(async () => {
  await intake?.close();
  await store?.close();
  await graph.close();
});

let nextId = 900_000_000_000_000;
const leadgenId = () => String(nextId++);

interface LoggedSubmission {
  id: string;
  outcome: string;
  error?: string;
  payload: unknown;
  leadgen?: {
    leadgenId: string;
    attempts: number;
    lastError?: string;
    nextAttemptAt?: string;
    giveUpAt: string;
  };
}

async function submissionsOf(source: TestSource): Promise<LoggedSubmission[]> {
  return (await intake.asUser('GET', `/api/sources/${source.sourceId}/submissions?limit=100`)).json().data;
}

async function submissionOf(source: TestSource, id: string): Promise<LoggedSubmission | undefined> {
  return (await submissionsOf(source)).find((entry) => entry.leadgen?.leadgenId === id);
}

const receivedFor = (submissionId: string) =>
  intake.received.filter((event) => (event.data as { submissionId: string }).submissionId === submissionId);

const metaSource = (graphAccessToken: string | null = GRAPH_TOKEN) =>
  intake.addSource({ receiving: { format: 'facebook-lead-ads', graphAccessToken } });

afterEach(() => {
  for (const line of logLines) expect(line).not.toContain(GRAPH_TOKEN);
});

describe('Meta leadgen notifications', () => {
  it('answers 200 once a submission per lead is stored, then fetches each lead and publishes it', async () => {
    const source = await metaSource();
    const [first, second] = [leadgenId(), leadgenId()];
    graph.answers.set(first, [{ status: 200, body: graphLead(first, 'joe@example.com') }]);
    graph.answers.set(second, [{ status: 200, body: graphLead(second, 'ann@example.com') }]);

    const response = await intake.post(source.token, notification(first, Number(second)));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true });
    // Stored before the answer: both are in the log already, fetched or about to be.
    const stored = await submissionsOf(source);
    expect(stored.map((entry) => entry.leadgen?.leadgenId).sort()).toEqual([first, second].sort());
    for (const entry of stored) expect(['fetching', 'accepted']).toContain(entry.outcome);

    await waitFor('both leads accepted', async () =>
      (await submissionsOf(source)).every((entry) => entry.outcome === 'accepted'),
    );
    await intake.drained();
    const firstEntry = (await submissionOf(source, first))!;
    const [event] = receivedFor(firstEntry.id);
    expect(event?.data).toMatchObject({
      sourceId: source.sourceId,
      origin: 'webhook',
      fields: { email: 'joe@example.com', firstName: 'Joe', lastName: 'Example', phone: '+15555550123' },
      custom: expect.objectContaining({ car_make: 'Honda' }),
    });
    expect(firstEntry).toMatchObject({
      payload: graphLead(first, 'joe@example.com'),
      leadgen: { attempts: 1 },
    });
    const [request] = graph.requestsFor(first);
    expect(request?.searchParams.get('access_token')).toBe(GRAPH_TOKEN);

    // Meta repeats a notification it saw no 200 for: no second fetch, no second lead.
    expect((await intake.post(source.token, notification(first))).statusCode).toBe(200);
    await waitFor('the repeat logged', async () =>
      (await submissionsOf(source)).some((entry) => entry.outcome === 'duplicate_delivery'),
    );
    await intake.drained();
    expect(receivedFor(firstEntry.id)).toHaveLength(1);
    expect(graph.requestsFor(first)).toHaveLength(1);
  });

  it('retries with backoff after a 5xx, keeping the attempts and the last error in the log', async () => {
    const source = await metaSource();
    const id = leadgenId();
    const lead = graphLead(id, 'retry@example.com');
    graph.answers.set(id, [
      {
        status: 503,
        body: { error: { message: 'Service temporarily unavailable', code: 2, is_transient: true } },
      },
      { status: 500, body: { error: { message: 'An unknown error occurred', code: 1 } } },
      { status: 200, body: lead },
    ]);
    expect((await intake.post(source.token, notification(id))).statusCode).toBe(200);
    await waitFor('the lead accepted', async () => (await submissionOf(source, id))?.outcome === 'accepted');
    const entry = (await submissionOf(source, id))!;
    expect(entry.leadgen?.attempts).toBe(3);
    expect(graph.requestsFor(id)).toHaveLength(3);
    await intake.drained();
    expect(receivedFor(entry.id)).toHaveLength(1);
  });

  it('a 400 for an invalid token fails at once with the reason; replay fetches again', async () => {
    const source = await metaSource();
    const id = leadgenId();
    graph.answers.set(id, [{ status: 400, body: INVALID_TOKEN }]);
    expect((await intake.post(source.token, notification(id))).statusCode).toBe(200);
    await waitFor(
      'the fetch failed',
      async () => (await submissionOf(source, id))?.outcome === 'fetch_failed',
    );
    const failed = (await submissionOf(source, id))!;
    const reason =
      'Graph API answered 400: Invalid OAuth access token - Cannot parse access token (code 190)';
    expect(failed).toMatchObject({ error: reason, leadgen: { attempts: 1, lastError: reason } });
    expect(failed.leadgen?.nextAttemptAt).toBeUndefined();
    expect(graph.requestsFor(id)).toHaveLength(1);
    expect(logLines.some((line) => line.includes('access_token=[REDACTED]'))).toBe(true);

    graph.answers.set(id, [{ status: 200, body: graphLead(id, 'fixed@example.com') }]);
    const replay = await intake.asUser(
      'POST',
      `/api/sources/${source.sourceId}/submissions/${failed.id}/replay`,
    );
    expect(replay.statusCode).toBe(202);
    expect(replay.json()).toEqual({ submissionId: failed.id, outcome: 'fetching' });
    await waitFor('the lead accepted', async () => (await submissionOf(source, id))?.outcome === 'accepted');
    await intake.drained();
    expect(receivedFor(failed.id)).toHaveLength(1);
  });

  it('waits for a graphAccessToken, and a restart resumes the fetches from the store', async () => {
    const source = await metaSource(null);
    const id = leadgenId();
    graph.answers.set(id, [{ status: 200, body: graphLead(id, 'later@example.com') }]);
    expect((await intake.post(source.token, notification(id))).statusCode).toBe(200);
    await waitFor(
      'a failed attempt',
      async () => ((await submissionOf(source, id))?.leadgen?.attempts ?? 0) >= 1,
    );
    expect(await submissionOf(source, id)).toMatchObject({
      outcome: 'fetching',
      leadgen: { lastError: expect.stringContaining('no graphAccessToken') },
    });
    expect(graph.requestsFor(id)).toHaveLength(0);

    await intake.close();
    intake = await start();
    const set = await intake.internal('PUT', `/internal/intake/sources/${source.sourceId}`, {
      sourceId: source.sourceId,
      name: source.name,
      webhookToken: source.token,
      fieldMappings: {},
      format: 'facebook-lead-ads',
      graphAccessToken: GRAPH_TOKEN,
      revision: 2,
    });
    expect(set.statusCode).toBe(204);
    await waitFor('the lead accepted', async () => (await submissionOf(source, id))?.outcome === 'accepted');
    expect(graph.requestsFor(id)).toHaveLength(1);
  });

  it('a notification that names no lead is 400; other formats take the same body as an ordinary payload', async () => {
    const source = await metaSource();
    const empty = await intake.post(source.token, { object: 'page', entry: [{ id: '1', changes: [] }] });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toEqual({
      error: 'The leadgen notification names no lead (entry[].changes[].value.leadgen_id)',
    });
    const generic = await intake.addSource();
    expect(
      (await intake.post(generic.token, { ...notification(leadgenId()), email: 'x@example.com' })).statusCode,
    ).toBe(200);
  });
});
