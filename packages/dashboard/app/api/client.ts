import createClient from 'openapi-fetch';
import type { components, paths } from './schema.gen.js';
import { session } from './session.js';

/**
 * fetch with the session's access token; on a 401 it refreshes the tokens once and retries. Every
 * call of the dashboard (the typed client, uploads, downloads) goes through it.
 */
export async function authorizedFetch(input: Request): Promise<Response> {
  const attempt = (request: Request) => {
    const token = session.accessToken;
    if (token) request.headers.set('authorization', `Bearer ${token}`);
    return fetch(request);
  };
  const retry = input.clone();
  const response = await attempt(input);
  if (response.status !== 401 || !session.refreshToken) return response;
  if (!(await session.refresh())) return response;
  return attempt(retry);
}

/** The API, typed from docs/openapi.json (generated into schema.gen.ts by the build). */
export const api = createClient<paths>({ baseUrl: location.origin, fetch: authorizedFetch });

export type Schemas = components['schemas'];

type JsonOf<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': infer Body } } };
}
  ? Body
  : paths[P][M] extends { responses: { 201: { content: { 'application/json': infer Body } } } }
    ? Body
    : never;

export type LeadListItem = JsonOf<'/api/leads', 'get'>['data'][number];
export type LeadDetail = JsonOf<'/api/leads/{id}', 'get'>;
export type MergePreview = JsonOf<'/api/leads/{id}/merge-preview', 'get'>;
export type TimelineEvent = JsonOf<'/api/leads/{id}/events', 'get'>['data'][number];
export type Source = JsonOf<'/api/sources', 'get'>[number];
export type Pipeline = JsonOf<'/api/pipelines', 'get'>[number];
export type Stage = Pipeline['stages'][number];
export type User = JsonOf<'/api/users', 'get'>[number];
export type ApiKey = JsonOf<'/api/api-keys', 'get'>[number];
export type Sequence = JsonOf<'/api/sequences', 'get'>[number];
export type SequenceEnrollment = JsonOf<'/api/sequences/{id}/enrollments', 'get'>['data'][number];
export type ImportReport = JsonOf<'/api/leads/imports/{importId}', 'get'>;
type ImportAnswer = JsonOf<'/api/leads/import', 'post'>;
export type ImportDryRun = Extract<ImportAnswer, { dryRun: true }>;
export type ImportStarted = Exclude<ImportAnswer, { dryRun: true }>;
export type WebhookSubscription = JsonOf<'/api/webhook-subscriptions', 'get'>[number];
export type WebhookDelivery = JsonOf<'/api/webhook-subscriptions/{id}/deliveries', 'get'>['data'][number];
export type DeliveryQuery = NonNullable<
  paths['/api/webhook-subscriptions/{id}/deliveries']['get']['parameters']['query']
>;
export type LeadListQuery = NonNullable<paths['/api/leads']['get']['parameters']['query']>;

export const STATUSES = ['new', 'contacted', 'qualified', 'converted', 'closed'] as const;
export const QUALIFICATIONS = ['hot', 'warm', 'cold'] as const;
export type Status = (typeof STATUSES)[number];

/** The `{ error }` of a failed call, or a generic message. */
export function errorMessage(error: unknown, fallback = 'Something went wrong'): string {
  if (error && typeof error === 'object' && 'error' in error && typeof error.error === 'string')
    return error.error;
  // fetch's own failure (Chromium "Failed to fetch", Firefox "NetworkError…", Safari "Load failed"):
  // the request never reached the API.
  if (error instanceof TypeError && /fetch|network|load failed/i.test(error.message))
    return 'The server could not be reached: check the connection.';
  if (error instanceof Error) return error.message;
  return fallback;
}

/** Throws the API's `{ error }` message when a call failed; returns its data otherwise. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || !result.response.ok) {
    throw new Error(errorMessage(result.error, `Request failed (${result.response.status})`));
  }
  return result.data as T;
}

/** A call's options naming its path's parameters (`/api/leads/{id}` -> `inPath({ id })`). */
export function inPath<P extends Record<string, string>>(path: P): { params: { path: P } } {
  return { params: { path } };
}
