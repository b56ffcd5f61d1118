import { type ConfigOf, configLoader, int } from '@lead-capture/kit';
import { MAILER_CONFIG } from '@lead-capture/mailer';

/** What the sequence worker reads beside the process's own variables (README table). */
export const SEQUENCE_CONFIG = {
  ...MAILER_CONFIG,
  SEQUENCE_TICK_MS: int({
    min: 50,
    default: 1000,
    doc: 'How often the scheduler looks for due steps (and relays events not yet published)',
  }),
  SEQUENCE_STEP_LEASE_MS: int({
    min: 1000,
    default: 120_000,
    doc: 'How long a scheduler holds a due enrolment; one that crashed meanwhile has it taken over after that',
  }),
};

export type SequenceConfig = ConfigOf<typeof SEQUENCE_CONFIG>;

export const loadSequenceConfig = configLoader(SEQUENCE_CONFIG);
