import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ROUTING_TABLE } from '@lead-capture/gateway';
import { HEALTH_PATHS } from '@lead-capture/kit';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { renderManifests } from '../k8s/render.js';
import { configOf, PROCESSES } from './config-specs.js';

const file = (path: string) => fileURLToPath(new URL(`../k8s/${path}`, import.meta.url));
const committed = await readFile(file('lead-capture.yaml'), 'utf8');
const manifests = parseAllDocuments(committed).map((doc) => doc.toJSON()) as {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}[];
const secretsExample = await readFile(file('secrets.env.example'), 'utf8');
const secretKeys = [...secretsExample.matchAll(/^([a-z0-9-]+)=/gm)].map((match) => match[1]!);
const kustomization = parse(await readFile(file('kustomization.yaml'), 'utf8'));

/** The model (and its JSON schema, from the Kubernetes OpenAPI document) of every kind we ship. */
const MODELS: Record<string, { validate(): void } & (new (data: never) => { validate(): void })> = {
  'apps/v1/Deployment': Deployment as never,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler as never,
  'networking.k8s.io/v1/Ingress': Ingress as never,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy as never,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget as never,
  'v1/ConfigMap': ConfigMap as never,
  'v1/Secret': Secret as never,
  'v1/Service': Service as never,
};

const ofKind = <T = (typeof manifests)[number]>(kind: string) =>
  manifests.filter((m) => m.kind === kind) as T[];
const deployments = ofKind<IDeployment>('Deployment');
const deploymentOf = (process: string) =>
  deployments.find((d) => d.metadata?.name === `lead-capture-${process}`);

describe('deploy/k8s', () => {
  it('is what deploy/k8s/manifests.ts generates (pnpm --filter @lead-capture/deploy k8s)', () => {
    expect(committed).toBe(renderManifests());
  });

  it('validates every manifest, and the Secret kustomize makes, against the Kubernetes schemas', () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: kustomization.secretGenerator[0].name },
      stringData: Object.fromEntries(secretKeys.map((key) => [key, 'x'])),
    };
    for (const manifest of [...manifests, secret]) {
      const Model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
      expect(Model, `no schema for ${manifest.apiVersion} ${manifest.kind}`).toBeDefined();
      expect(
        () => new Model!(manifest as never).validate(),
        `${manifest.kind} ${manifest.metadata.name}`,
      ).not.toThrow();
    }
    // The schemas do catch a wrong value.
    const broken = structuredClone(deployments[0]!);
    (broken.spec!.template.spec!.containers[0]!.ports![0] as { containerPort: unknown }).containerPort =
      'http';
    expect(() => new Deployment(broken).validate()).toThrow(/containerPort/);
  });

  it('runs every process with probes on its health paths, resources, non-root, and the variables its config reads', () => {
    const configMap = ofKind('ConfigMap')[0]!;
    for (const process of PROCESSES) {
      const deployment = deploymentOf(process);
      expect(deployment, `no Deployment for ${process}`).toBeDefined();
      const pod = deployment!.spec!.template.spec!;
      const [container] = pod.containers;
      expect(container!.args).toEqual([`services/${process}/dist/main.js`]);
      expect(container!.readinessProbe?.httpGet?.path).toBe('/readyz');
      expect(container!.livenessProbe?.httpGet?.path).toBe('/healthz');
      for (const probe of [container!.readinessProbe, container!.livenessProbe, container!.startupProbe]) {
        expect(HEALTH_PATHS).toContain(probe?.httpGet?.path);
        expect(container!.ports?.map((port) => port.name)).toContain(probe?.httpGet?.port);
      }
      expect(container!.resources?.requests?.memory).toBeDefined();
      expect(container!.resources?.limits?.memory).toBeDefined();
      expect(pod.securityContext?.runAsNonRoot).toBe(true);
      expect(container!.securityContext?.readOnlyRootFilesystem).toBe(true);

      const { names, required } = configOf(process);
      const env = [
        ...(container!.env ?? []).map((variable) => variable.name),
        ...Object.keys(configMap.data!),
      ];
      expect(
        env.filter((name) => !names.has(name)),
        `${process} sets variables it never reads`,
      ).toEqual([]);
      expect(
        required.filter((name) => !env.includes(name)),
        `${process} lacks required variables`,
      ).toEqual([]);
      for (const variable of container!.env ?? []) {
        const ref = variable.valueFrom?.secretKeyRef;
        if (ref) expect(secretKeys, `${process}: ${variable.name}`).toContain(ref.key);
      }
    }
    expect(deployments.map((d) => d.metadata?.name).sort()).toEqual(
      PROCESSES.map((process) => `lead-capture-${process}`).sort(),
    );
  });

  it('has a Service for the gateway and every service it routes to, at the URLs the ConfigMap gives', () => {
    const services = new Set(ofKind('Service').map((service) => service.metadata.name));
    for (const process of new Set(['gateway', ...ROUTING_TABLE.map((route) => route.service)])) {
      expect(services).toContain(`lead-capture-${process}`);
    }
    const urls = Object.entries(ofKind('ConfigMap')[0]!.data!).filter(([name]) =>
      name.endsWith('_SERVICE_URL'),
    );
    expect(urls.length).toBeGreaterThan(0);
    for (const [, url] of urls) expect(services).toContain(new URL(url).hostname);
  });

  it('scales and protects every Deployment: an autoscaler and a disruption budget each', () => {
    const targets = ofKind<{ spec: { scaleTargetRef: { name: string } } }>('HorizontalPodAutoscaler').map(
      (hpa) => hpa.spec.scaleTargetRef.name,
    );
    const budgets = ofKind<{ spec: { selector: { matchLabels: Record<string, string> } } }>(
      'PodDisruptionBudget',
    );
    for (const deployment of deployments) {
      expect(targets).toContain(deployment.metadata?.name);
      const labels = deployment.spec!.template.metadata!.labels!;
      expect(
        budgets.filter((budget) =>
          Object.entries(budget.spec.selector.matchLabels).every(([k, v]) => labels[k] === v),
        ),
      ).toHaveLength(1);
    }
  });

  it('gives each signer of internal identities its own private key, and every service the public keys', () => {
    const signingKeys: Record<string, string | undefined> = {};
    for (const process of PROCESSES) {
      const env = deploymentOf(process)!.spec!.template.spec!.containers[0]!.env ?? [];
      const ref = env.find((variable) => variable.name === 'INTERNAL_SIGNING_KEY')?.valueFrom?.secretKeyRef;
      if (ref) signingKeys[process] = ref.key;
      if (process !== 'gateway') {
        expect(
          env.map((variable) => variable.name),
          process,
        ).toContain('INTERNAL_PUBLIC_KEYS');
      }
    }
    expect(signingKeys).toEqual({
      gateway: 'gateway-signing-key',
      source: 'source-signing-key',
      webhooks: 'webhooks-signing-key',
    });
  });

  it('lets the webhooks worker reach the internet on 80/443 but no private or in-cluster address, and of the app only the lead service', () => {
    type Peer = {
      ipBlock?: { cidr: string; except?: string[] };
      podSelector?: { matchLabels?: Record<string, string> };
    };
    type Rule = { to?: Peer[]; ports?: { port: number }[] };
    type Policy = {
      spec: { podSelector: { matchLabels?: Record<string, string> }; policyTypes: string[]; egress?: Rule[] };
    };
    const pod = deploymentOf('webhooks')!.spec!.template.metadata!.labels!;
    const rules = ofKind<Policy>('NetworkPolicy')
      .filter(
        (policy) =>
          policy.spec.policyTypes.includes('Egress') &&
          Object.entries(policy.spec.podSelector.matchLabels ?? {}).every(
            ([key, value]) => pod[key] === value,
          ),
      )
      .flatMap((policy) => policy.spec.egress ?? []);
    const web = rules.filter(
      (rule) => !rule.ports || rule.ports.some(({ port }) => port === 80 || port === 443),
    );
    expect(web.length).toBeGreaterThan(0);
    for (const rule of web) {
      expect(rule.to?.length).toBeGreaterThan(0);
      for (const peer of rule.to ?? []) {
        expect(peer.podSelector).toBeUndefined();
        const { cidr, except = [] } = peer.ipBlock!;
        expect(except).toEqual(
          expect.arrayContaining(
            cidr.includes(':')
              ? ['::/96', 'fc00::/7', 'fe80::/10']
              : [
                  '10.0.0.0/8',
                  '172.16.0.0/12',
                  '192.168.0.0/16',
                  '169.254.0.0/16',
                  '100.64.0.0/10',
                  '127.0.0.0/8',
                ],
          ),
        );
      }
    }
    const pods = rules.flatMap((rule) => rule.to ?? []).filter((peer) => peer.podSelector);
    expect(pods.map((peer) => peer.podSelector?.matchLabels?.['app.kubernetes.io/name'])).toEqual(['lead']);
    // To any address: DNS and the broker, Redis and MongoDB ports only.
    const anywhere = rules.filter((rule) => !rule.to).flatMap((rule) => rule.ports!.map(({ port }) => port));
    expect(new Set(anywhere)).toEqual(new Set([53, 5672, 5671, 6379, 27017]));
  });

  it('lets a service be called only by its callers: the gateway, and those chain.ts declares', () => {
    type Policy = {
      metadata: { name: string };
      spec: {
        podSelector: { matchLabels?: Record<string, string> };
        ingress?: {
          from?: { podSelector?: { matchLabels?: Record<string, string> } }[];
          ports?: { port: number }[];
        }[];
      };
    };
    const callers = (service: string) =>
      ofKind<Policy>('NetworkPolicy')
        .filter((policy) => policy.spec.podSelector.matchLabels?.['app.kubernetes.io/name'] === service)
        .flatMap((policy) => policy.spec.ingress ?? [])
        .filter((rule) => rule.ports?.some(({ port }) => port === 3000))
        .flatMap((rule) =>
          (rule.from ?? []).map((peer) => peer.podSelector?.matchLabels?.['app.kubernetes.io/name']),
        );
    expect(callers('lead').sort()).toEqual(['gateway', 'webhooks']);
    expect(callers('intake').sort()).toEqual(['gateway', 'source']);
    expect(callers('scoring')).toEqual(['gateway']);
    expect(callers('enrichment')).toEqual([]);
  });

  it('lets traffic from outside reach only the gateway', () => {
    type Policy = {
      metadata: { name: string };
      spec: {
        podSelector: { matchLabels?: Record<string, string> };
        ingress?: { from?: unknown[]; ports?: { port: number }[] }[];
        policyTypes: string[];
      };
    };
    const policies = ofKind<Policy>('NetworkPolicy');
    const denyAll = policies.find((policy) => Object.keys(policy.spec.podSelector).length === 0);
    expect(denyAll?.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(denyAll?.spec.ingress).toBeUndefined();
    // A rule without `from` admits any source: only the gateway's policy may have one.
    const open = policies.filter((policy) =>
      (policy.spec.ingress ?? []).some((rule) => rule.from === undefined),
    );
    expect(open.map((policy) => policy.spec.podSelector.matchLabels?.['app.kubernetes.io/name'])).toEqual([
      'gateway',
    ]);
    const ingress = ofKind<{
      spec: { rules: { http: { paths: { backend: { service: { name: string } } }[] } }[] };
    }>('Ingress');
    const backends = ingress.flatMap((i) =>
      i.spec.rules.flatMap((rule) => rule.http.paths.map((p) => p.backend.service.name)),
    );
    expect(new Set(backends)).toEqual(new Set(['lead-capture-gateway']));
    expect(
      ofKind<{ spec: { type: string } }>('Service').every((service) => service.spec.type === 'ClusterIP'),
    ).toBe(true);
  });
});
