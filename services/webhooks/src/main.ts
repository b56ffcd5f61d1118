import { runServiceProcess } from '@lead-capture/kit';
import { createWebhooksService } from './service.js';

await runServiceProcess(createWebhooksService, { name: 'webhooks' });
