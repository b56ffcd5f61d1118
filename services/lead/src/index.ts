export { LEAD_CONFIG, type LeadConfig, loadLeadConfig } from './config.js';
export { createLeadService, type LeadServiceOptions } from './service.js';
