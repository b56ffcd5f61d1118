import { GATEWAY_CONFIG } from '@lead-capture/gateway';
import { COMMON_CONFIG } from '@lead-capture/kit';

/** The embedded runtime: every variable of a process and of the gateway; secrets may be left unset. */
export const EMBEDDED_CONFIG = { ...COMMON_CONFIG, ...GATEWAY_CONFIG };
