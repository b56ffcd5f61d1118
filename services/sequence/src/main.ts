import { runServiceProcess } from '@lead-capture/kit';
import { createSequenceService } from './service.js';

await runServiceProcess(createSequenceService, { name: 'sequence' });
