import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Collection, type DocStore, openStore } from '@lead-capture/docstore';
import { movableClock, waitFor } from '@lead-capture/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LeasedJobKind, type LeasedJobSchedule, LeasedJobs } from './leased-jobs.js';

type JobDoc = {
  _id: string;
  dueAt: Date;
  done: boolean;
  doneBy: string | null;
  leaseOwner: string | null;
  leaseUntil: Date | null;
};

const LEASE_MS = 60_000;
/** Longer than any test: a pass runs only when the test calls it or wakes the loop. */
const NEVER_MS = 60 * 60_000;

/** A promise the test resolves when it chooses: a job's run waits on it. */
function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/** Lets every callback already due run (timers of 0 ms, I/O), without letting time pass. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('LeasedJobs', () => {
  let dataDir: string;
  let store: DocStore;
  let jobs: Collection<JobDoc>;
  let clock: ReturnType<typeof movableClock>;
  /** The runs, in order: which job, by which owner. */
  let ran: Array<{ id: string; owner: string }>;
  const loops: Array<LeasedJobs<JobDoc>> = [];

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'leased-jobs-test-'));
    store = await openStore(undefined, { dataDir });
    jobs = store.collection<JobDoc>('test_jobs');
    clock = movableClock();
    ran = [];
  });

  afterEach(async () => {
    await Promise.all(loops.splice(0).map((loop) => loop.stop()));
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function addJobs(...ids: string[]): Promise<void> {
    const dueAt = clock.now();
    for (const _id of ids) {
      await jobs.insertOne({ _id, dueAt, done: false, doneBy: null, leaseOwner: null, leaseUntil: null });
    }
  }

  /** Marks a job done and gives its lease up, if `owner` still holds it. */
  async function finish(job: JobDoc, owner: string): Promise<void> {
    await jobs.updateOne(
      { _id: job._id, leaseOwner: owner },
      { $set: { done: true, doneBy: owner, leaseOwner: null, leaseUntil: null } },
    );
  }

  /**
   * A loop over `test_jobs`: claims the earliest due job nobody holds (or whose lease ran out), runs
   * `work` and then finishes the job. `schedule` and `kind` override the defaults.
   */
  function loop(
    options: {
      schedule?: Partial<LeasedJobSchedule>;
      kind?: Partial<LeasedJobKind<JobDoc>>;
      work?: (job: JobDoc) => Promise<void>;
    } = {},
  ): LeasedJobs<JobDoc> {
    const { schedule, kind, work } = options;
    const created: LeasedJobs<JobDoc> = new LeasedJobs<JobDoc>(
      { logger: { error: () => {} }, now: clock.now, intervalMs: NEVER_MS, leaseMs: LEASE_MS, ...schedule },
      {
        name: 'test jobs',
        claim: (lease) =>
          jobs.findOneAndUpdate(
            {
              done: false,
              dueAt: { $lte: lease.now },
              $or: [{ leaseUntil: null }, { leaseUntil: { $lte: lease.now } }],
            },
            { $set: { leaseOwner: lease.owner, leaseUntil: lease.until } },
            { sort: { dueAt: 1, _id: 1 } },
          ),
        run: async (job) => {
          ran.push({ id: job._id, owner: created.owner });
          await work?.(job);
          await finish(job, created.owner);
        },
        onFailure: () => {},
        ...kind,
      },
    );
    loops.push(created);
    return created;
  }

  it('gives each due job to one owner only, however many owners claim at once', async () => {
    const ids = Array.from({ length: 10 }, (_, index) => `job-${index}`);
    await addJobs(...ids);
    // The first runs wait until both owners run a job: each has claimed while the other held one.
    const bothRunning = gate();
    const running = new Set<string>();
    const work = async (job: JobDoc) => {
      running.add(job.leaseOwner!);
      if (running.size === 2) bothRunning.open();
      await bothRunning.opened;
    };
    const a = loop({ work, schedule: { concurrency: 2 } });
    const b = loop({ work, schedule: { concurrency: 2 } });

    const [byA, byB] = await Promise.all([a.pass(), b.pass()]);

    expect(ran.map(({ id }) => id).sort()).toEqual(ids);
    expect(byA + byB).toBe(10);
    expect(byA).toBeGreaterThan(0);
    expect(byB).toBeGreaterThan(0);
    expect(new Set(ran.map(({ owner }) => owner))).toEqual(new Set([a.owner, b.owner]));
    expect(await jobs.countDocuments({ done: false })).toBe(0);
  });

  it("takes over a crashed owner's job only once its lease has run out", async () => {
    await addJobs('job-1');
    // An owner that claims the job and dies before it settles it: the claim stays in the store.
    const crashed = loop({ kind: { run: async () => {} } });
    expect(await crashed.pass()).toBe(1);
    const survivor = loop();

    expect(await survivor.pass()).toBe(0);
    clock.advance(LEASE_MS - 5000);
    expect(await survivor.pass()).toBe(0);
    expect(ran).toEqual([]);

    clock.advance(5000);
    expect(await survivor.pass()).toBe(1);
    expect(ran).toEqual([{ id: 'job-1', owner: survivor.owner }]);
    expect(await jobs.findOne({ _id: 'job-1' })).toMatchObject({ done: true, doneBy: survivor.owner });
  });

  it('runs a pass at once on wake(), and one more after it when woken meanwhile, never two at once', async () => {
    let passes = 0;
    let passesRunning = 0;
    let mostRunning = 0;
    const firstRun = gate();
    const firstRunReleased = gate();
    const jobsLoop = loop({
      schedule: {
        onPass: () => {
          passes++;
        },
      },
      kind: {
        passLimit: 1,
        startPass: async () => {
          passesRunning++;
          mostRunning = Math.max(mostRunning, passesRunning);
          return undefined;
        },
        afterPass: async () => {
          passesRunning--;
        },
      },
      work: async (job) => {
        if (job._id !== 'job-1') return;
        firstRun.open();
        await firstRunReleased.opened;
      },
    });
    jobsLoop.start();
    await addJobs('job-1');

    jobsLoop.wake();
    await firstRun.opened;
    // Woken while its pass (which takes one job at most) is under way: another pass follows it.
    await addJobs('job-2');
    jobsLoop.wake();
    firstRunReleased.open();

    await waitFor('job-2 run by the pass after the woken one', () => passes >= 2, 5000);
    expect(ran.map(({ id }) => id)).toEqual(['job-1', 'job-2']);
    expect(mostRunning).toBe(1);
    expect(await jobs.countDocuments({ done: true })).toBe(2);
  });

  it('takes a job that falls due during a pass while another worker is still at a slow one', async () => {
    await addJobs('job-1');
    const slow = gate();
    const jobsLoop = loop({
      schedule: { concurrency: 2 },
      work: async (job) => {
        if (job._id === 'job-1') await slow.opened;
      },
    });
    const passed = jobsLoop.pass();
    await waitFor('job-1 under way', () => ran.length === 1);
    // The other worker found nothing due; a job falls due and the loop is woken.
    await addJobs('job-2');
    jobsLoop.wake();
    await waitFor(
      'job-2 run beside the slow job-1',
      async () => (await jobs.countDocuments({ done: true })) === 1,
    );
    expect(ran.map(({ id }) => id)).toEqual(['job-1', 'job-2']);
    slow.open();
    expect(await passed).toBe(2);
  });

  it('stop() waits for the job under way and takes no new one', async () => {
    await addJobs('job-1', 'job-2');
    const started = gate();
    const release = gate();
    const jobsLoop = loop({
      work: async () => {
        started.open();
        await release.opened;
      },
    });
    jobsLoop.start();
    jobsLoop.wake();
    await started.opened;

    let stopped = false;
    const stopping = jobsLoop.stop().then(() => {
      stopped = true;
    });
    await settle();
    expect(stopped).toBe(false);

    release.open();
    await stopping;
    expect(ran.map(({ id }) => id)).toEqual(['job-1']);
    expect(await jobs.findOne({ _id: 'job-1' })).toMatchObject({ done: true });
    expect(await jobs.findOne({ _id: 'job-2' })).toMatchObject({ done: false, leaseOwner: null });

    // Stopped: a wake-up starts nothing.
    jobsLoop.wake();
    await settle();
    expect(ran).toHaveLength(1);
  });

  it('hands a failing job to onFailure, leaves it until its lease runs out, and goes on with the others', async () => {
    await addJobs('job-1', 'job-2', 'job-3');
    const failures: Array<{ id: string; message: string }> = [];
    let failing = true;
    const jobsLoop = loop({
      work: async (job) => {
        if (job._id === 'job-1' && failing) throw new Error('receiver down');
      },
      kind: {
        onFailure: (job, error) => {
          failures.push({ id: job._id, message: (error as Error).message });
        },
      },
    });

    expect(await jobsLoop.pass()).toBe(2);
    expect(failures).toEqual([{ id: 'job-1', message: 'receiver down' }]);
    expect(await jobs.countDocuments({ done: true })).toBe(2);

    // Backed off: the failed job is not tried again while its lease holds.
    expect(await jobsLoop.pass()).toBe(0);
    expect(ran.filter(({ id }) => id === 'job-1')).toHaveLength(1);

    failing = false;
    clock.advance(LEASE_MS);
    expect(await jobsLoop.pass()).toBe(1);
    expect(await jobs.countDocuments({ done: true })).toBe(3);
  });

  it('logs an onFailure that throws and goes on with the other jobs', async () => {
    await addJobs('job-1', 'job-2');
    const logged: unknown[] = [];
    const jobsLoop = loop({
      schedule: { logger: { error: (details: unknown) => logged.push(details) } },
      work: async (job) => {
        if (job._id === 'job-1') throw new Error('job failed');
      },
      kind: {
        onFailure: () => {
          throw new Error('store down');
        },
      },
    });

    expect(await jobsLoop.pass()).toBe(1);
    expect(logged).toHaveLength(1);
    expect(await jobs.findOne({ _id: 'job-2' })).toMatchObject({ done: true });
  });
});
