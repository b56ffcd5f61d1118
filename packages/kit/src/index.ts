export {
  AUDIT_RECORD_HEADER,
  type AuditContext,
  type AuditedAction,
  type AuditRecord,
  auditRecordOf,
  collectWriteRoutes,
  type DeclaredRoute,
  type NotAudited,
  notAudited,
  pickFields,
  type RouteAudit,
  readAuditRecord,
  reportAuditRecords,
} from './audit.js';
export { auditCreate, auditRecord } from './audit-actions.js';
export { patchBodySchema, writeBodySchema } from './body-schemas.js';
export { type ClosedObjectSchema, closedObject } from './closed-object.js';
export {
  bool,
  COMMON_CONFIG,
  ConfigError,
  type ConfigOf,
  type ConfigSpec,
  type ConfigVar,
  type ConfigVarDescription,
  type CustomOptions,
  configLoader,
  custom,
  describeConfig,
  exitOnConfigError,
  type IntOptions,
  int,
  LOG_LEVELS,
  type LogLevel,
  loadConfig,
  oneOf,
  type ParsedOptions,
  parsed,
  port,
  required,
  type SecretOptions,
  secret,
  str,
  type UrlOptions,
  url,
} from './config.js';
export { displayTextProblem } from './display-text.js';
export {
  AppError,
  badRequest,
  conflict,
  ERROR_RESPONSE_SCHEMA,
  ERROR_STATUS,
  type ErrorKind,
  errorResponses,
  forbidden,
  internal,
  notFound,
  payloadTooLarge,
  requestTimeout,
  tooManyRequests,
  unauthorized,
  unavailable,
  unsupportedMediaType,
} from './errors.js';
export { type IdentityGuard, requireRole, requireScope, requireService, requireSession } from './guards.js';
export { HEALTH_PATHS, type HealthCheck, type HealthOptions, registerHealthRoutes } from './health.js';
export { createHttpApp, type HttpAppOptions, parseJsonBody, REQUEST_ID_HEADER } from './http.js';
export {
  clientOf,
  type ForwardedClient,
  type Identity,
  type IdentityTarget,
  INTERNAL_IDENTITY_HEADER,
  type InternalClaims,
  identityAudience,
  serviceIdentity,
  signIdentity,
  signInternalToken,
  verifyIdentity,
  verifyInternalToken,
} from './identity.js';
export {
  createHttpInternalClient,
  createInProcessInternalClient,
  HTTP_SERVICES,
  type HttpInternalClientOptions,
  type HttpServiceName,
  INTERNAL_PATH_PREFIX,
  type InProcessInternalClientOptions,
  SERVICE_URL_CONFIG,
  type ServiceUrls,
  serviceUrlsFromConfig,
} from './internal-client.js';
export { type InternalIdentityOptions, internalIdentity } from './internal-identity.js';
export {
  createInternalTrust,
  formatInternalPublicKeys,
  GATEWAY_SIGNER,
  generateInternalKeys,
  generateSigningKey,
  INTERNAL_KEY_CONFIG,
  INTERNAL_SIGNERS,
  type InternalKeys,
  type InternalPublicKeys,
  type InternalSigner,
  type InternalTrust,
  type InternalTrustOptions,
  internalSigner,
  parseInternalPublicKeys,
  privateKeyFrom,
  publicKeyFrom,
  publicKeyText,
  serviceKeysFromConfig,
  signersTrustedBy,
} from './internal-keys.js';
export { type Lease, type LeasedJobKind, type LeasedJobSchedule, LeasedJobs } from './leased-jobs.js';
export { createLogger, type Logger, type LoggerOptions, redactUrl } from './logger.js';
export {
  buildMetricsApp,
  CHAIN_METRIC_NAMES,
  type ChainMetrics,
  type ChainMetricsOptions,
  createChainMetrics,
  createMetricsRegistry,
  METRICS_CONFIG,
  METRICS_PATH,
  serveMetrics,
} from './metrics.js';
export {
  type OpenApiOptions,
  registerOpenApi,
  SECURITY_SCHEMES,
  SERVICE_OPENAPI_PATH,
  serveOpenApiDocument,
} from './openapi.js';
export {
  type EmitOptions,
  Outbox,
  type OutboxChange,
  type OutboxEntry,
  type OutboxOptions,
  outboxesOf,
} from './outbox.js';
export {
  findPage,
  LIMIT_QUERY_SCHEMA,
  MAX_PAGE,
  PAGE_QUERY_SCHEMA,
  PAGINATION_SCHEMA,
  pagedListSchema,
  pagedQuerySchema,
  pagination,
} from './pagination.js';
export { type PeriodicTask, startPeriodicTask } from './periodic.js';
export { type ProcessOptions, runProcess } from './process-main.js';
export { ID_PARAMS_SCHEMA, pathParamsSchema } from './route-params.js';
export { openBus, type RunServiceOptions, runServiceProcess, SERVICE_PROCESS_CONFIG } from './run-service.js';
export {
  type Clock,
  type InternalClient,
  type InternalRequest,
  type InternalResponse,
  type ServiceDeps,
  type ServiceFactory,
  type ServiceModule,
  systemClock,
} from './service.js';
export { buildServiceApp, type ServiceAppOptions } from './service-app.js';
export { type OutboxRelayOptions, serviceOutbox } from './service-outbox.js';
export { registerSettingsRoutes, type SettingsRoutesOptions } from './settings-routes.js';
export {
  createShutdown,
  SHUTDOWN_PHASES,
  type Shutdown,
  type ShutdownHook,
  type ShutdownOptions,
  type ShutdownPhase,
  type ShutdownResult,
} from './shutdown.js';
export {
  type BatchingHandler,
  derivedEventId,
  type StageResultDoc,
  StageResults,
  type StageResultsOptions,
} from './stage-results.js';
export {
  type BackgroundTask,
  ownedDeps,
  type StageServiceParts,
  stageService,
} from './stage-service.js';
export { type GroupHandlers, type GroupSubscribeOptions, subscribeGroup } from './subscribe.js';
export { parseTrustProxy, type TrustProxySetting, toFastifyTrustProxy, trustProxy } from './trust-proxy.js';
export { uniqueBy } from './unique.js';
export { timeOrderedUuidV5, uuidV5 } from './uuid-v5.js';
export { documentView, pagedAnswer } from './views.js';
