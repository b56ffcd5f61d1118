import { randomUUID } from 'node:crypto';
import { waitFor } from '@lead-capture/testing';

/** The first admin every test runtime creates; the password is a fixed test value. */
export const ADMIN = { email: 'e2e-admin@example.com', password: 'e2e-admin-password' } as const;

/** A lead normally shows within a second; the deadline leaves room for a loaded 2-core box. */
export const PROCESSED_WITHIN_MS = 15_000;

export interface ApiResponse<T> {
  status: number;
  body: T;
}

/** The lead fields these tests look at, as the list answers them. */
export interface ListedLead {
  id: string;
  email: string | null;
  firstName: string | null;
  company: string | null;
  status: string;
  score: number;
  qualification: 'hot' | 'warm' | 'cold' | null;
  source: { id: string; name: string; deleted: boolean };
  isDuplicate: boolean;
  duplicateOf: string | null;
  createdAt: string;
}

export interface LeadDetail extends ListedLead {
  customFields: Record<string, unknown>;
  pipeline: { id: string; name: string } | null;
  stage: { id: string; name: string } | null;
  enrichment: {
    email: Record<string, unknown>;
    geo: Record<string, unknown>;
    company: Record<string, unknown>;
  } | null;
  scoreReasons: { points: number; label: string }[];
  notifications: { id: string; to: string; status: string }[];
  enrollments: { sequenceId: string; sequenceName: string; enrollmentId: string }[];
}

export interface TimelineEntry {
  id: string;
  type: string;
  occurredAt: string;
  data: Record<string, unknown>;
}

export interface CreatedSource {
  id: string;
  name: string;
  webhookToken: string;
  webhookUrl: string;
  fieldMappings: Record<string, string>;
  createdAt: string;
}

export interface Pipeline {
  id: string;
  name: string;
  isDefault: boolean;
  stages: { id: string; name: string; order: number }[];
}

export interface Submission {
  id: string;
  outcome: string;
  leadId?: string;
  payload: Record<string, unknown> | null;
}

export type WebhookEncoding = 'json' | 'form';

/** A client of the public API, as a user's integration sees it: through the gateway, over HTTP. */
export class Api {
  private constructor(
    readonly baseUrl: string,
    /** Who signed in, as the login answered. */
    readonly user: { id: string; email: string; name: string },
    private readonly accessToken: string,
  ) {}

  /** Signs in (one scrypt verification: about 0.4 s, so once per test file). */
  static async login(baseUrl: string, credentials: { email: string; password: string }): Promise<Api> {
    const response = await fetch(`${baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(credentials),
    });
    const body = (await response.json()) as {
      token?: string;
      user?: { id: string; email: string; name: string };
    };
    if (response.status !== 200 || !body.token || !body.user) {
      throw new Error(`Login failed: ${response.status} ${JSON.stringify(body)}`);
    }
    return new Api(baseUrl, body.user, body.token);
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.accessToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
  }

  /** The signed-in user's Authorization header, for a request whose answer's headers matter. */
  authorization(): { authorization: string } {
    return { authorization: `Bearer ${this.accessToken}` };
  }

  get<T>(path: string): Promise<ApiResponse<T>> {
    return this.request<T>('GET', path);
  }

  async createSource(name: string, fieldMappings?: Record<string, string>): Promise<CreatedSource> {
    const { status, body } = await this.request<CreatedSource>('POST', '/api/sources', {
      name,
      fieldMappings,
    });
    if (status !== 201) throw new Error(`Creating source ${name}: ${status} ${JSON.stringify(body)}`);
    return body;
  }

  async defaultPipeline(): Promise<Pipeline> {
    const { body } = await this.get<Pipeline[]>('/api/pipelines');
    const pipeline = body.find((candidate) => candidate.isDefault);
    if (!pipeline) throw new Error(`No default pipeline in ${JSON.stringify(body)}`);
    return pipeline;
  }

  /** Every lead whose name, e-mail or company contains `text`, page by page (100 a page). */
  async searchLeads(text: string): Promise<ListedLead[]> {
    const leads: ListedLead[] = [];
    for (let page = 1; ; page++) {
      const { status, body } = await this.get<{ data: ListedLead[]; pagination: { pages: number } }>(
        `/api/leads?search=${encodeURIComponent(text)}&limit=100&page=${page}`,
      );
      if (status !== 200) throw new Error(`Listing leads: ${status} ${JSON.stringify(body)}`);
      leads.push(...body.data);
      if (page >= body.pagination.pages) return leads;
    }
  }

  /** Polls the list until at least `count` leads contain `text`; they arrive by events. */
  async leadsListed(text: string, count: number, timeoutMs = PROCESSED_WITHIN_MS): Promise<ListedLead[]> {
    let seen: ListedLead[] = [];
    return waitFor(
      `${count} leads with "${text}" to be listed`,
      async () => {
        seen = await this.searchLeads(text);
        return seen.length >= count ? seen : undefined;
      },
      timeoutMs,
      () => JSON.stringify(seen.map((lead) => lead.email)),
    );
  }

  async leadDetail(id: string): Promise<LeadDetail> {
    const { status, body } = await this.get<LeadDetail>(`/api/leads/${id}`);
    if (status !== 200) throw new Error(`Reading lead ${id}: ${status} ${JSON.stringify(body)}`);
    return body;
  }

  /**
   * Polls the intake's log of the source until `count` submissions have become leads (outcome
   * `lead_created`, reported back by lead.captured): the chain's first step is settled for them.
   */
  async submissionsBecameLeads(
    sourceId: string,
    count: number,
    timeoutMs = PROCESSED_WITHIN_MS,
  ): Promise<Submission[]> {
    let total = 0;
    return waitFor(
      `${count} submissions of source ${sourceId} to become leads`,
      async () => {
        const { status, body } = await this.get<{ data: Submission[]; pagination: { total: number } }>(
          `/api/sources/${sourceId}/submissions?outcome=lead_created&limit=100`,
        );
        if (status !== 200) throw new Error(`Reading submissions: ${status} ${JSON.stringify(body)}`);
        total = body.pagination.total;
        return total >= count ? body.data : undefined;
      },
      timeoutMs,
      () => `${total} did`,
    );
  }

  /** Polls the lead's timeline until it holds an entry of the type (entries follow the listing). */
  async timelineShows(
    leadId: string,
    type: string,
    timeoutMs = PROCESSED_WITHIN_MS,
  ): Promise<TimelineEntry[]> {
    let seen: TimelineEntry[] = [];
    return waitFor(
      `a "${type}" entry in the timeline of lead ${leadId}`,
      async () => {
        const { status, body } = await this.get<{ data: TimelineEntry[] }>(`/api/leads/${leadId}/events`);
        if (status !== 200)
          throw new Error(`Reading the timeline of ${leadId}: ${status} ${JSON.stringify(body)}`);
        seen = body.data;
        return seen.some((entry) => entry.type === type) ? seen : undefined;
      },
      timeoutMs,
      () => JSON.stringify(seen.map((entry) => entry.type)),
    );
  }
}

/** Posts one lead to a webhook path (no credentials: the token in the path is one). */
export async function postWebhook(
  baseUrl: string,
  path: string,
  payload: Record<string, string>,
  encoding: WebhookEncoding = 'json',
): Promise<ApiResponse<unknown>> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: {
      'content-type': encoding === 'json' ? 'application/json' : 'application/x-www-form-urlencoded',
    },
    body: encoding === 'json' ? JSON.stringify(payload) : new URLSearchParams(payload).toString(),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** A word no other lead of the run contains: put in every e-mail of one test, found again by search. */
export function runTag(label: string): string {
  return `${label}${randomUUID().slice(0, 8)}`;
}

/**
 * Posts `count` leads at once, each with its own e-mail `<tag>-<i>@example.com`, and returns the
 * e-mails that got a 200: the leads the service promised to keep. `onAccepted` runs after each 200.
 */
export async function postBurst(
  baseUrl: string,
  path: string,
  tag: string,
  count: number,
  onAccepted?: (acceptedSoFar: number) => void,
): Promise<{ accepted: string[]; statuses: number[] }> {
  let acceptedSoFar = 0;
  const results = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const email = `${tag}-${i}@example.com`;
      const { status } = await postWebhook(baseUrl, path, { email, firstName: 'Burst', lastName: String(i) });
      if (status === 200) onAccepted?.(++acceptedSoFar);
      return { email, status };
    }),
  );
  return {
    accepted: results.filter(({ status }) => status === 200).map(({ email }) => email),
    statuses: results.map(({ status }) => status),
  };
}

/** How many times each e-mail is listed: every value 1 means no lead lost and none doubled. */
export function countByEmail(leads: readonly ListedLead[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { email } of leads) if (email) counts.set(email, (counts.get(email) ?? 0) + 1);
  return counts;
}
