import { runServiceProcess } from '@lead-capture/kit';
import { createPipelineService } from './service.js';

await runServiceProcess(createPipelineService, { name: 'pipeline' });
