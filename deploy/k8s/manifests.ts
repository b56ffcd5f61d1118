import { PIPELINE, SYNC_CALLS } from '@lead-capture/contracts';
import { GATEWAY_SIGNER, HTTP_SERVICES, INTERNAL_SIGNERS } from '@lead-capture/kit';

/**
 * The Kubernetes manifests of the distributed mode, written to deploy/k8s/lead-capture.yaml by
 * `pnpm --filter @lead-capture/deploy k8s` (a test fails while the file is stale). Plain objects, so
 * the file stays readable YAML and kustomize can patch it.
 */

export const APP = 'lead-capture';
export const IMAGE = 'lead-capture';
export const HTTP_PORT = 3000;
export const METRICS_PORT = 9464;
/** Where the services find each other: the gateway and every service with an HTTP API. */
export const serviceHost = (service: string) => `${APP}-${service}`;

/**
 * Your cluster's pod and service ranges, when they lie outside the private ranges below (pods on
 * public IPv4 or global IPv6 addresses): the webhooks worker's internet egress excludes them too.
 * Set yours here, then `pnpm --filter @lead-capture/deploy k8s`. Most clusters (10.x pods, 10.96.0.0/12
 * services; GKE, EKS and AKS defaults) are covered already.
 */
export const CLUSTER_CIDRS: readonly string[] = [];

/** What the webhooks worker may never reach on the internet ports: private, shared, link-local, loopback. */
export const PRIVATE_IPV4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.168.0.0/16',
] as const;
/** The same for IPv6: IPv4-compatible and -mapped, unique local, link-local (loopback is in ::/96). */
export const PRIVATE_IPV6 = ['::/96', '::ffff:0:0/96', 'fc00::/7', 'fe80::/10'] as const;

/** Chain stages: scaled on CPU by their HorizontalPodAutoscaler, up to more replicas. */
const WORKERS = new Set<string>(PIPELINE.map(({ stage }) => stage));

export interface ServiceShape {
  name: string;
  /** Another pod calls it (the gateway forwards to it, or a service calls its /internal/ routes). */
  http: boolean;
  /** Reaches the outside world beyond the broker, cache and database: ports it may open. */
  egressPorts: readonly number[];
  /** Those ports, to public addresses only (never a private or in-cluster range): subscribers' URLs. */
  publicEgressOnly: boolean;
  /** The services whose HTTP port it calls: the gateway every service it routes to, a service those SYNC_CALLS declares. */
  calls: readonly string[];
  /** Secrets it reads, beside those every process reads. */
  secrets: readonly { name: string; key: string; optional?: boolean }[];
  memory: { request: string; limit: string };
  replicas: { min: number; max: number };
}

const COMMON_SECRETS = [
  { name: 'AMQP_URL', key: 'amqp-url' },
  { name: 'REDIS_URL', key: 'redis-url' },
  { name: 'MONGO_URL', key: 'mongo-url' },
] as const;

const SMTP = { name: 'SMTP_URL', key: 'smtp-url', optional: true } as const;
/** Every service: the public keys of whoever signs the identities it receives. */
const PUBLIC_KEYS = { name: 'INTERNAL_PUBLIC_KEYS', key: 'internal-public-keys' } as const;
/** A signer's own private key: the gateway's, and each calling service's; no other pod holds one. */
const signingKey = (name: string) =>
  INTERNAL_SIGNERS.includes(name) ? [{ name: 'INTERNAL_SIGNING_KEY', key: `${name}-signing-key` }] : [];

/** The shape of each process: `services` is every service module (the embedded runtime's list). */
export function serviceShapes(services: readonly string[]): ServiceShape[] {
  const gateway: ServiceShape = {
    name: 'gateway',
    http: true,
    egressPorts: [],
    publicEgressOnly: false,
    calls: services.filter((name) => (HTTP_SERVICES as readonly string[]).includes(name)),
    secrets: [
      ...signingKey(GATEWAY_SIGNER),
      { name: 'JWT_SECRET', key: 'jwt-secret' },
      { name: 'ADMIN_EMAIL', key: 'admin-email' },
      { name: 'ADMIN_PASSWORD', key: 'admin-password' },
    ],
    // Sign-ins hash with scrypt at ~128 MiB each, LOGIN_HASH_CONCURRENCY (2) at once.
    memory: { request: '384Mi', limit: '768Mi' },
    replicas: { min: 2, max: 6 },
  };
  return [
    gateway,
    ...services.map((name): ServiceShape => {
      const mails = name === 'notification' || name === 'sequence';
      return {
        name,
        http: (HTTP_SERVICES as readonly string[]).includes(name),
        // Mail to SMTP; outbound webhooks to subscribers' URLs; DNS (MX) is allowed to every pod.
        egressPorts: mails ? [25, 465, 587] : name === 'webhooks' ? [80, 443] : [],
        publicEgressOnly: name === 'webhooks',
        calls: [...new Set(SYNC_CALLS.filter(({ caller }) => caller === name).map(({ callee }) => callee))],
        secrets: [PUBLIC_KEYS, ...signingKey(name), ...(mails || name === 'webhooks' ? [SMTP] : [])],
        // CSV imports of up to 50 MiB are parsed by the lead service.
        memory: name === 'lead' ? { request: '256Mi', limit: '768Mi' } : { request: '160Mi', limit: '384Mi' },
        replicas: WORKERS.has(name) ? { min: 1, max: 10 } : { min: 1, max: 4 },
      };
    }),
  ];
}

const labels = (service: string) => ({
  'app.kubernetes.io/name': service,
  'app.kubernetes.io/part-of': APP,
});
const selector = (service: string) => ({
  'app.kubernetes.io/name': service,
  'app.kubernetes.io/part-of': APP,
});
const PART_OF = { 'app.kubernetes.io/part-of': APP };

/** One of a service's manifests: named after the service, with its labels. */
function serviceManifest(apiVersion: string, kind: string, shape: ServiceShape, spec: object): object {
  return { apiVersion, kind, metadata: { name: serviceHost(shape.name), labels: labels(shape.name) }, spec };
}

function deployment(shape: ServiceShape): object {
  const probe = (path: string, extra: object) => ({
    httpGet: { path, port: 'http' },
    periodSeconds: 10,
    timeoutSeconds: 2,
    ...extra,
  });
  const secretEnv = [...COMMON_SECRETS, ...shape.secrets].map((secret) => ({
    name: secret.name,
    valueFrom: {
      secretKeyRef: {
        name: `${APP}-secrets`,
        key: secret.key,
        ...('optional' in secret && secret.optional ? { optional: true } : {}),
      },
    },
  }));
  const extraEnv = shape.name === 'gateway' ? [{ name: 'TRUST_PROXY', value: '1' }] : [];
  return serviceManifest('apps/v1', 'Deployment', shape, {
    replicas: shape.replicas.min,
    selector: { matchLabels: selector(shape.name) },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
    template: {
      metadata: {
        labels: labels(shape.name),
        annotations: {
          'prometheus.io/scrape': 'true',
          'prometheus.io/port': String(METRICS_PORT),
          'prometheus.io/path': '/metrics',
        },
      },
      spec: {
        automountServiceAccountToken: false,
        // SIGTERM drains (SHUTDOWN_TIMEOUT_MS, 10 s); readiness turns 503 at once meanwhile.
        terminationGracePeriodSeconds: 30,
        securityContext: {
          runAsNonRoot: true,
          runAsUser: 1000,
          runAsGroup: 1000,
          fsGroup: 1000,
          seccompProfile: { type: 'RuntimeDefault' },
        },
        containers: [
          {
            name: shape.name,
            image: IMAGE,
            args: [`services/${shape.name}/dist/main.js`],
            ports: [
              { name: 'http', containerPort: HTTP_PORT },
              { name: 'metrics', containerPort: METRICS_PORT },
            ],
            envFrom: [{ configMapRef: { name: `${APP}-config` } }],
            env: [...secretEnv, ...extraEnv],
            startupProbe: probe('/healthz', { failureThreshold: 30, periodSeconds: 2 }),
            livenessProbe: probe('/healthz', { failureThreshold: 3 }),
            readinessProbe: probe('/readyz', { failureThreshold: 2, periodSeconds: 5 }),
            resources: {
              requests: { cpu: '100m', memory: shape.memory.request },
              limits: { memory: shape.memory.limit },
            },
            securityContext: {
              allowPrivilegeEscalation: false,
              readOnlyRootFilesystem: true,
              capabilities: { drop: ['ALL'] },
            },
            volumeMounts: [
              { name: 'tmp', mountPath: '/tmp' },
              { name: 'data', mountPath: '/app/data' },
            ],
          },
        ],
        volumes: [
          { name: 'tmp', emptyDir: {} },
          { name: 'data', emptyDir: {} },
        ],
      },
    },
  });
}

function service(shape: ServiceShape): object {
  return serviceManifest('v1', 'Service', shape, {
    type: 'ClusterIP',
    selector: selector(shape.name),
    ports: [{ name: 'http', port: HTTP_PORT, targetPort: 'http' }],
  });
}

function autoscaler(shape: ServiceShape): object {
  return serviceManifest('autoscaling/v2', 'HorizontalPodAutoscaler', shape, {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: serviceHost(shape.name) },
    minReplicas: shape.replicas.min,
    maxReplicas: shape.replicas.max,
    metrics: [
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } },
      },
    ],
    behavior: { scaleDown: { stabilizationWindowSeconds: 300 } },
  });
}

function disruptionBudget(shape: ServiceShape): object {
  return serviceManifest('policy/v1', 'PodDisruptionBudget', shape, {
    // One at a time: a drain never takes every replica of a service at once.
    maxUnavailable: 1,
    selector: { matchLabels: selector(shape.name) },
  });
}

const DNS = [
  { protocol: 'UDP', port: 53 },
  { protocol: 'TCP', port: 53 },
];
/** RabbitMQ (plain and TLS), Redis, MongoDB: wherever they run (a managed service, an operator's pods). */
const BACKING = [5672, 5671, 6379, 27017].map((port) => ({ protocol: 'TCP', port }));
/**
 * Where the broker, Redis and MongoDB are, as NetworkPolicy peers (an ipBlock of a managed service,
 * a namespaceSelector of an operator's pods); empty: any address on their ports. Narrow it to yours,
 * then `pnpm --filter @lead-capture/deploy k8s`.
 */
export const BACKING_PEERS: readonly object[] = [];

/** Any address but the private and in-cluster ranges. */
function publicAddresses(): object[] {
  const isIpv6 = (cidr: string) => cidr.includes(':');
  return [
    { ipBlock: { cidr: '0.0.0.0/0', except: [...PRIVATE_IPV4, ...CLUSTER_CIDRS.filter((c) => !isIpv6(c))] } },
    { ipBlock: { cidr: '::/0', except: [...PRIVATE_IPV6, ...CLUSTER_CIDRS.filter(isIpv6)] } },
  ];
}

function networkPolicies(shapes: readonly ServiceShape[]): object[] {
  const policy = (name: string, spec: object) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: `${APP}-${name}`, labels: PART_OF },
    spec,
  });
  const monitoring = {
    from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
    ports: [{ protocol: 'TCP', port: METRICS_PORT }],
  };
  const http = [{ protocol: 'TCP', port: HTTP_PORT }];
  const pods = (service: string) => ({ podSelector: { matchLabels: selector(service) } });
  /** The policy `<service>-<name>` of one service's pods: what it lets in, or out. */
  const servicePolicy = (service: string, name: string, direction: 'Ingress' | 'Egress', rules: object[]) =>
    policy(`${service}-${name}`, {
      ...pods(service),
      policyTypes: [direction],
      [direction === 'Ingress' ? 'ingress' : 'egress']: rules,
    });
  const callersOf = (service: string) =>
    shapes.filter((shape) => shape.calls.includes(service)).map((shape) => shape.name);
  return [
    // Nothing reaches a pod, and a pod reaches nothing, unless a policy below allows it.
    policy('default-deny', { podSelector: {}, policyTypes: ['Ingress', 'Egress'] }),
    // The gateway: the only pod reachable from outside (the ingress controller, anywhere).
    servicePolicy('gateway', 'ingress', 'Ingress', [{ ports: http }, monitoring]),
    // Every other service: its HTTP port only from its callers (the gateway, the services chain.ts
    // declares), and Prometheus.
    ...shapes
      .filter((shape) => shape.name !== 'gateway')
      .map((shape) => {
        const callers = callersOf(shape.name);
        const fromCallers =
          shape.http && callers.length > 0 ? [{ from: callers.map(pods), ports: http }] : [];
        return servicePolicy(shape.name, 'ingress', 'Ingress', [...fromCallers, monitoring]);
      }),
    // Every pod: DNS, the broker, Redis and MongoDB.
    policy('egress', {
      podSelector: { matchLabels: PART_OF },
      policyTypes: ['Egress'],
      egress: [
        { ports: DNS },
        { ...(BACKING_PEERS.length > 0 ? { to: BACKING_PEERS } : {}), ports: BACKING },
      ],
    }),
    // The services each pod calls, on their HTTP port only.
    ...shapes
      .filter((shape) => shape.calls.length > 0)
      .map((shape) =>
        servicePolicy(shape.name, 'calls', 'Egress', [{ to: shape.calls.map(pods), ports: http }]),
      ),
    // The few that talk to the world: SMTP; subscribers' webhook URLs, on public addresses only.
    ...shapes
      .filter((shape) => shape.egressPorts.length > 0)
      .map((shape) =>
        servicePolicy(shape.name, 'egress', 'Egress', [
          {
            ...(shape.publicEgressOnly ? { to: publicAddresses() } : {}),
            ports: shape.egressPorts.map((port) => ({ protocol: 'TCP', port })),
          },
        ]),
      ),
  ];
}

function configMap(shapes: readonly ServiceShape[]): object {
  const urls = Object.fromEntries(
    shapes
      .filter((shape) => shape.http && shape.name !== 'gateway')
      .map((shape) => [
        `${shape.name.toUpperCase()}_SERVICE_URL`,
        `http://${serviceHost(shape.name)}:${HTTP_PORT}`,
      ]),
  );
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `${APP}-config`, labels: PART_OF },
    // Read by every process (see the README's configuration table); secrets are in the Secret.
    data: {
      HOST: '0.0.0.0',
      PORT: String(HTTP_PORT),
      METRICS_PORT: String(METRICS_PORT),
      LOG_LEVEL: 'info',
      PUBLIC_BASE_URL: 'https://leads.example.com',
      ...urls,
    },
  };
}

function ingress(): object {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: APP, labels: labels('gateway') },
    spec: {
      tls: [{ hosts: ['leads.example.com'], secretName: `${APP}-tls` }],
      rules: [
        {
          host: 'leads.example.com',
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: serviceHost('gateway'), port: { name: 'http' } } },
              },
            ],
          },
        },
      ],
    },
  };
}

/** Every manifest, in the order kubectl should apply them. */
export function buildManifests(services: readonly string[]): object[] {
  const shapes = serviceShapes(services);
  return [
    configMap(shapes),
    ...networkPolicies(shapes),
    ...shapes.flatMap((shape) => [
      deployment(shape),
      ...(shape.http ? [service(shape)] : []),
      autoscaler(shape),
      disruptionBudget(shape),
    ]),
    ingress(),
  ];
}

/** The Secret's keys (deploy/k8s/secrets.env.example holds one line per key). */
export function secretKeys(services: readonly string[]): string[] {
  const keys = new Set<string>(COMMON_SECRETS.map(({ key }) => key));
  for (const shape of serviceShapes(services)) for (const { key } of shape.secrets) keys.add(key);
  return [...keys].sort();
}
