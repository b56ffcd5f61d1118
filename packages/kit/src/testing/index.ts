export { deleteRabbitTopology, openTestRabbitBus, type TestRabbitBus } from './rabbit.js';
export {
  busOn,
  faultyTestBus,
  inProcessTestBus,
  noInternalCalls,
  openTestStore,
  type Reply,
  type ServiceHarness,
  type ServiceHarnessOptions,
  startServiceHarness,
  type TestBus,
  testLogger,
  trackedTestBus,
  waitFor,
} from './service-harness.js';
