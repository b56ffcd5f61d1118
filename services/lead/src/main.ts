import { runServiceProcess } from '@lead-capture/kit';
import { createLeadService } from './service.js';

await runServiceProcess(createLeadService, { name: 'lead' });
