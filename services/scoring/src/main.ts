import { runServiceProcess } from '@lead-capture/kit';
import { createScoringService } from './service.js';

await runServiceProcess(createScoringService, { name: 'scoring' });
