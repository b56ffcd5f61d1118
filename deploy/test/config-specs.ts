import { ENRICHMENT_CONFIG } from '@lead-capture/enrichment';
import { DISTRIBUTED_GATEWAY_CONFIG } from '@lead-capture/gateway';
import { INTAKE_CONFIG } from '@lead-capture/intake';
import { type ConfigSpec, describeConfig, SERVICE_PROCESS_CONFIG } from '@lead-capture/kit';
import { LEAD_CONFIG } from '@lead-capture/lead';
import { MAILER_CONFIG } from '@lead-capture/mailer';
import { NOTIFICATION_CONFIG } from '@lead-capture/notification';
import { SEQUENCE_CONFIG } from '@lead-capture/sequence';
import { WEBHOOKS_CONFIG } from '@lead-capture/webhooks';
import { SERVICE_NAMES } from '../k8s/services.js';

/** Every process of the distributed mode: the gateway and each service module. */
export const PROCESSES: readonly string[] = ['gateway', ...SERVICE_NAMES];

/** The variables a service's own module reads, beside those every service process reads. */
const OWN_CONFIG: Record<string, readonly ConfigSpec[]> = {
  intake: [INTAKE_CONFIG],
  lead: [LEAD_CONFIG],
  enrichment: [ENRICHMENT_CONFIG],
  notification: [MAILER_CONFIG, NOTIFICATION_CONFIG],
  sequence: [MAILER_CONFIG, SEQUENCE_CONFIG],
  webhooks: [WEBHOOKS_CONFIG],
};

/** The environment variables a process reads (its config specs), and those it requires. */
export function configOf(process: string): { names: Set<string>; required: string[] } {
  const specs =
    process === 'gateway'
      ? [DISTRIBUTED_GATEWAY_CONFIG]
      : [SERVICE_PROCESS_CONFIG, ...(OWN_CONFIG[process] ?? [])];
  const variables = specs.flatMap((spec) => describeConfig(spec));
  return {
    names: new Set(variables.map(({ name }) => name)),
    required: variables.filter(({ required }) => required).map(({ name }) => name),
  };
}
