import { EMBEDDED_SERVICES } from '../../services/embedded/src/services.js';

/** Every service module, as the embedded runtime mounts them: one Deployment (and process) each. */
export const SERVICE_NAMES: readonly string[] = EMBEDDED_SERVICES.map(({ name }) => name);
