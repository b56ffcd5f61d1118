export { LEAD_CONFIG, type LeadConfig, loadLeadConfig } from './config.js';
export { createLeadService } from './service.js';
