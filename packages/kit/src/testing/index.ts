export { deleteRabbitTopology, openTestRabbitBus, type TestRabbitBus } from './rabbit.js';
export {
  inProcessTestBus,
  noInternalCalls,
  openTestStore,
  type Reply,
  type ServiceHarness,
  type ServiceHarnessOptions,
  startServiceHarness,
  testLogger,
  waitFor,
} from './service-harness.js';
