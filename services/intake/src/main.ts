import { runServiceProcess } from '@lead-capture/kit';
import { createIntakeService } from './service.js';

await runServiceProcess(createIntakeService, { name: 'intake' });
