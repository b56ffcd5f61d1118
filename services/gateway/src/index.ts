export { buildGateway, type GatewayDeps, type GatewaySettings } from './app.js';
export { DISTRIBUTED_GATEWAY_CONFIG, GATEWAY_CONFIG, type GatewayConfig } from './config.js';
export { EMBEDDED_ADMIN_EMAIL, type FirstAdminOptions } from './identity/first-admin.js';
export { buildMetricsApp, createGatewayMetrics, type GatewayMetrics } from './metrics.js';
export { createMemoryRateLimitStore } from './rate-limit/memory-store.js';
export { createRedisRateLimitStore, type RedisRateLimitStoreOptions } from './rate-limit/redis-store.js';
export type { RateLimitStore } from './rate-limit/store.js';
export { OPENAPI_PATH } from './routing/openapi-document.js';
export { ROUTING_TABLE, type RouteEntry } from './routing/table.js';
