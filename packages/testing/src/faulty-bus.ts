/** The publishing half of a message bus (structural, so this package needs no bus import). */
interface Publishing {
  publish(type: string, data: never, options?: never): Promise<unknown>;
  publishEnvelope(envelope: { type: string }): Promise<void>;
}

export interface BusFaults {
  /** While true every publish is refused, as by a broker that is down. */
  down: boolean;
  /** Refuses the next `count` publishes (of `type` only, when given), as a broker briefly away would. */
  failNext(count: number, type?: string): void;
  /**
   * Publishes of `type` from now on never settle, as a broker that took the message and never
   * confirms it; `onHeld` is called as each one starts (the moment a crash test kills the process).
   */
  hold(type: string, onHeld?: (type: string) => void): void;
  /** The types of the events the bus took (in order), publish and publishEnvelope alike. */
  readonly published: readonly string[];
  /** How many publishes were refused (down, or failNext). */
  readonly refused: number;
}

/**
 * Wraps a bus so a test can make its publishes fail, or hang, on demand, and see what it took. Give
 * the wrapped bus to the code under test; everything but publishing goes to the real bus.
 */
export function faultyBus<B extends Publishing>(bus: B): { bus: B; faults: BusFaults } {
  const failures: Array<{ type: string | undefined }> = [];
  const held = new Map<string, ((type: string) => void) | undefined>();
  const published: string[] = [];
  let refused = 0;
  const faults: BusFaults = {
    down: false,
    get refused() {
      return refused;
    },
    failNext(count, type) {
      for (let i = 0; i < count; i++) failures.push({ type });
    },
    hold(type, onHeld) {
      held.set(type, onHeld);
    },
    published,
  };

  async function guarded<T>(type: string, send: () => Promise<T>): Promise<T> {
    if (faults.down) {
      refused++;
      throw new Error('broker unreachable (test)');
    }
    const failure = failures.findIndex((entry) => entry.type === undefined || entry.type === type);
    if (failure !== -1) {
      failures.splice(failure, 1);
      refused++;
      throw new Error('publish not confirmed (test)');
    }
    if (held.has(type)) {
      held.get(type)?.(type);
      return new Promise<never>(() => {});
    }
    const result = await send();
    published.push(type);
    return result;
  }

  const publish = (type: string, data: never, options?: never) =>
    guarded(type, () => bus.publish(type, data, options));
  const publishEnvelope = (envelope: { type: string }) =>
    guarded(envelope.type, () => bus.publishEnvelope(envelope));
  const wrapped = new Proxy(bus, {
    get(target, property) {
      if (property === 'publish') return publish;
      if (property === 'publishEnvelope') return publishEnvelope;
      // Every event must go through the faults: no queueing inside a store transaction past them.
      if (property === 'transactionalPublisher') return undefined;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { bus: wrapped, faults };
}
