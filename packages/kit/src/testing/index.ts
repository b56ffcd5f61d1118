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
  TEST_INTERNAL_KEYS,
  type TestBus,
  testLogger,
  testSigner,
  trackedTestBus,
  waitFor,
} from './service-harness.js';
export {
  type CollectionWatcher,
  recordingBus,
  WRITE_METHODS,
  watchCollections,
} from './watch-collections.js';
