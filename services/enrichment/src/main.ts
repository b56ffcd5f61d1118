import { runServiceProcess } from '@lead-capture/kit';
import { createEnrichmentService } from './service.js';

await runServiceProcess(createEnrichmentService, { name: 'enrichment' });
