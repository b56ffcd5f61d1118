export { deleteRabbitTopology, openTestRabbitBus, type TestRabbitBus } from './rabbit.js';
export {
  inProcessTestBus,
  noInternalCalls,
  openTestStore,
  type Reply,
  type ServiceHarness,
  type ServiceHarnessOptions,
  startServiceHarness,
  TEST_INTERNAL_KEYS,
  testLogger,
  testSigner,
  waitFor,
} from './service-harness.js';
