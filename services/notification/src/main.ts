import { runServiceProcess } from '@lead-capture/kit';
import { createNotificationService } from './service.js';

await runServiceProcess(createNotificationService, { name: 'notification' });
