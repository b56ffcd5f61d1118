import type { FastifyInstance } from 'fastify';
import { type ConfigOf, url } from './config.js';
import { INTERNAL_IDENTITY_HEADER, serviceIdentity, signIdentity } from './identity.js';
import type { InternalSigner } from './internal-keys.js';
import type { InternalClient, InternalRequest, InternalResponse } from './service.js';

/** The services that answer HTTP: the gateway routes public prefixes to them; each has a base URL. */
export const HTTP_SERVICES = [
  'lead',
  'source',
  'pipeline',
  'intake',
  'scoring',
  'notification',
  'sequence',
  'webhooks',
] as const;
export type HttpServiceName = (typeof HTTP_SERVICES)[number];

function serviceUrl(name: HttpServiceName) {
  return url({
    optional: true,
    protocols: ['http:', 'https:'],
    doc: `Base URL of the ${name} service process (distributed mode), e.g. http://${name}:3000`,
  });
}

/** `<NAME>_SERVICE_URL` for every HTTP service; read by the gateway and by every service process. */
export const SERVICE_URL_CONFIG = {
  LEAD_SERVICE_URL: serviceUrl('lead'),
  SOURCE_SERVICE_URL: serviceUrl('source'),
  PIPELINE_SERVICE_URL: serviceUrl('pipeline'),
  INTAKE_SERVICE_URL: serviceUrl('intake'),
  SCORING_SERVICE_URL: serviceUrl('scoring'),
  NOTIFICATION_SERVICE_URL: serviceUrl('notification'),
  SEQUENCE_SERVICE_URL: serviceUrl('sequence'),
  WEBHOOKS_SERVICE_URL: serviceUrl('webhooks'),
};

export type ServiceUrls = Partial<Record<HttpServiceName, string>>;

/** The configured base URLs by service name (unset ones left out). */
export function serviceUrlsFromConfig(config: ConfigOf<typeof SERVICE_URL_CONFIG>): ServiceUrls {
  const urls: ServiceUrls = {};
  for (const name of HTTP_SERVICES) {
    const value = config[`${name.toUpperCase()}_SERVICE_URL` as keyof typeof SERVICE_URL_CONFIG];
    if (value !== undefined) urls[name] = value.replace(/\/+$/, '');
  }
  return urls;
}

export const INTERNAL_PATH_PREFIX = '/internal/';

function assertInternalPath(path: string): void {
  if (!path.startsWith(INTERNAL_PATH_PREFIX)) {
    throw new Error(`Internal calls go to ${INTERNAL_PATH_PREFIX}... paths only, not ${path}`);
  }
}

/** The caller's own identity, signed with its own key for this one request to `service`. */
async function requestHeaders(
  callerName: string,
  signer: InternalSigner | undefined,
  target: { service: string; method: string; path: string },
  body: unknown,
): Promise<Record<string, string>> {
  if (!signer) {
    throw new Error(
      `The ${callerName} service has no signing key: only the calls declared in SYNC_CALLS (packages/contracts/src/chain.ts) are signed`,
    );
  }
  const headers: Record<string, string> = {
    [INTERNAL_IDENTITY_HEADER]: await signIdentity(serviceIdentity(signer.name), signer, target),
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return headers;
}

/** JSON when the body is JSON, the text otherwise, null when empty. */
function decodeBody(text: string, contentType: string | undefined): unknown {
  if (text === '') return null;
  return contentType?.includes('application/json') ? JSON.parse(text) : text;
}

export interface InProcessInternalClientOptions {
  /**
   * The app that mounts every service (the embedded gateway). A getter, because the services
   * receive their client before that app is built.
   */
  app: () => FastifyInstance;
  /** The calling service, as `service:<callerName>` in the identity. */
  callerName: string;
  /** Its own key (named callerName); absent for a service that calls no other. */
  signer: InternalSigner | undefined;
}

/** Embedded mode: calls go through `app.inject`, with the same signed identity as over HTTP. */
export function createInProcessInternalClient(options: InProcessInternalClientOptions): InternalClient {
  const { app, signer, callerName } = options;
  if (signer && signer.name !== callerName)
    throw new Error(`The ${callerName} service holds ${signer.name}'s key`);
  return {
    async request(service: string, { method, path, body }: InternalRequest): Promise<InternalResponse> {
      assertInternalPath(path);
      const headers = await requestHeaders(callerName, signer, { service, method, path }, body);
      const response = await app().inject({
        method,
        url: path,
        headers,
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      return {
        status: response.statusCode,
        body: decodeBody(response.body, response.headers['content-type']?.toString()),
      };
    },
  };
}

export interface HttpInternalClientOptions {
  serviceUrls: ServiceUrls;
  /** The calling service, as `service:<callerName>` in the identity. */
  callerName: string;
  /** Its own key (named callerName); absent for a service that calls no other. */
  signer: InternalSigner | undefined;
  /** A call that has not answered by then rejects. Default 5000 ms. */
  timeoutMs?: number;
}

/** Distributed mode: calls go over HTTP to `<NAME>_SERVICE_URL`, with a signed identity. */
export function createHttpInternalClient(options: HttpInternalClientOptions): InternalClient {
  const { serviceUrls, signer, callerName, timeoutMs = 5000 } = options;
  if (signer && signer.name !== callerName)
    throw new Error(`The ${callerName} service holds ${signer.name}'s key`);
  return {
    async request(service: string, { method, path, body }: InternalRequest): Promise<InternalResponse> {
      assertInternalPath(path);
      const base = serviceUrls[service as HttpServiceName];
      if (base === undefined) {
        throw new Error(`No URL for the ${service} service: set ${service.toUpperCase()}_SERVICE_URL`);
      }
      const response = await fetch(`${base}${path}`, {
        method,
        headers: await requestHeaders(callerName, signer, { service, method, path }, body),
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      return {
        status: response.status,
        body: decodeBody(await response.text(), response.headers.get('content-type') ?? undefined),
      };
    },
  };
}
