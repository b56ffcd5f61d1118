import type { FieldMappings, SourceFormat } from '@lead-capture/contracts';
import { badRequest, clientOf } from '@lead-capture/kit';
import type { FastifyRequest } from 'fastify';
import { toFieldMappings } from '../../field-mappings.js';
import type { ChangeContext, SourceDocument, Sources } from '../../sources.js';
import type { Creator, UserDirectory } from '../../users.js';

export const MAX_SOURCE_NAME_LENGTH = 255;

/** Dependencies of the /api/sources routes. */
export interface SourceRoutesOptions {
  sources: Sources;
  users: UserDirectory;
  /** PUBLIC_BASE_URL; without it the base of webhook URLs comes from each request. */
  publicBaseUrl?: string;
}

export interface CreatedSourceView {
  id: string;
  name: string;
  webhookToken: string;
  webhookUrl: string;
  fieldMappings: FieldMappings;
  createdAt: string;
}

/** A source as GET and PUT answer it; a read-only caller sees no webhook token (it creates leads). */
export interface SourceView extends Omit<CreatedSourceView, 'webhookToken' | 'webhookUrl'> {
  webhookToken: string | null;
  webhookUrl: string | null;
  format: SourceFormat;
  /** Whether each write-only secret is set; never its value. */
  secretsSet: { verifyToken: boolean; signingSecret: boolean; graphAccessToken: boolean };
  createdBy: Creator;
}

/** Trimmed; 1-255 characters (code points, as the event schema counts them). */
export function parseSourceName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw badRequest('name must not be empty');
  if ([...name].length > MAX_SOURCE_NAME_LENGTH) {
    throw badRequest(`name must be at most ${MAX_SOURCE_NAME_LENGTH} characters long`);
  }
  return name;
}

/** `{base_url}/api/webhooks/inbound/<token>`; base_url is PUBLIC_BASE_URL, else the protocol and host the client asked for (clientOf). */
export function webhookUrlOf(
  token: string,
  request: FastifyRequest,
  publicBaseUrl: string | undefined,
): string {
  const client = clientOf(request);
  const base = (publicBaseUrl ?? `${client.protocol}://${client.host}`).replace(/\/+$/, '');
  return `${base}/api/webhooks/inbound/${token}`;
}

export function createdSourceView(
  source: SourceDocument,
  request: FastifyRequest,
  publicBaseUrl: string | undefined,
): CreatedSourceView {
  return {
    id: source._id,
    name: source.name,
    webhookToken: source.webhookToken,
    webhookUrl: webhookUrlOf(source.webhookToken, request, publicBaseUrl),
    fieldMappings: toFieldMappings(source.fieldMappings),
    createdAt: source.createdAt,
  };
}

/** Sources as GET and PUT answer them, each with its creator. */
export async function sourceViews(
  sources: readonly SourceDocument[],
  request: FastifyRequest,
  options: SourceRoutesOptions,
): Promise<SourceView[]> {
  const creators = await options.users.creators(sources.map((source) => source.createdBy));
  // The token is the credential of the public webhook: whoever holds it can create leads, which a
  // read-only key must not. Read scope sees null in its place.
  const showTokens = request.identity?.scope === 'full';
  return sources.map((source) => ({
    ...createdSourceView(source, request, options.publicBaseUrl),
    ...(showTokens ? {} : { webhookToken: null, webhookUrl: null }),
    format: source.format,
    secretsSet: {
      verifyToken: source.verifyToken !== undefined,
      signingSecret: source.signingSecret !== undefined,
      graphAccessToken: source.graphAccessToken !== undefined,
    },
    createdBy: creators.get(source.createdBy) ?? { id: source.createdBy, name: null, email: null },
  }));
}

export function changeContext(request: FastifyRequest): ChangeContext {
  return { correlationId: request.id, log: request.log };
}
