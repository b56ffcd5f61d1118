import { runServiceProcess } from '@lead-capture/kit';
import { createSourceService } from './service.js';

await runServiceProcess(createSourceService, { name: 'source' });
