import { faultyTestBus } from '@lead-capture/kit/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { enrichedEventId } from '../src/index.js';
import {
  captured,
  type EnrichmentHarness,
  leadSnapshot,
  logger,
  startEnrichmentHarness,
  waitFor,
} from './harness.js';

describe('the enrichment worker on the in-process bus', () => {
  let h: EnrichmentHarness;
  afterEach(async () => h?.close());

  it('enriches a captured lead and passes the lead on', async () => {
    h = await startEnrichmentHarness();
    const data = captured({
      email: 'jane@mail.acme-corp.co.uk',
      custom: { ip_address: '8.8.8.8', budget: '10k' },
    });
    const event = await h.bus.publish('lead.captured', data, { correlationId: 'submission-1' });

    await waitFor('lead.enriched', () => h.enriched.length === 1);
    const [enriched] = h.enriched;
    expect(enriched).toMatchObject({
      id: enrichedEventId(event.id),
      type: 'lead.enriched',
      correlationId: 'submission-1',
      causationId: event.id,
    });
    expect(enriched!.data).toEqual({
      leadId: data.leadId,
      lead: data.lead,
      enrichment: {
        email: {
          address: 'jane@mail.acme-corp.co.uk',
          valid: true,
          problem: null,
          domain: 'mail.acme-corp.co.uk',
          disposable: false,
          freeProvider: false,
          role: false,
          mx: 'found',
          deliverable: 'yes',
        },
        geo: { country: 'US', countryName: 'United States', source: 'payload_ip', ip: '8.8.8.8' },
        company: { name: 'Acme Corp', domain: 'acme-corp.co.uk', source: 'email_domain' },
      },
    });
  });

  it('enriches a lead that has almost nothing to go on', async () => {
    h = await startEnrichmentHarness();
    await h.bus.publish(
      'lead.captured',
      captured({ email: null, phone: null, firstName: null, client: { ip: '10.0.0.7' } }),
    );
    await waitFor('lead.enriched', () => h.enriched.length === 1);
    expect((h.enriched[0]!.data as { enrichment: unknown }).enrichment).toEqual({
      email: {
        address: null,
        valid: false,
        problem: 'missing',
        domain: null,
        disposable: false,
        freeProvider: false,
        role: false,
        mx: 'unknown',
        deliverable: 'no',
      },
      geo: { country: null, countryName: null, source: 'none', ip: null },
      company: { name: null, domain: null, source: 'none' },
    });
    expect(h.dns.mxQueries).toBe(0);
  });

  it('publishes nothing more when the same captured event is delivered again', async () => {
    h = await startEnrichmentHarness();
    const first = await h.bus.publish('lead.captured', captured());
    await waitFor('the first lead.enriched', () => h.enriched.length === 1);

    await h.bus.publishEnvelope(first);
    const other = await h.bus.publish('lead.captured', captured({ email: 'joe@globex.io' }));
    await waitFor('the other lead.enriched', () => h.enriched.length >= 2);
    // The worker finished on all three deliveries, and all it published has been observed.
    await h.handled.settled('the deliveries', [first, first, other]);
    await h.drained();

    expect(h.enriched.map((event) => event.id)).toEqual([
      enrichedEventId(first.id),
      enrichedEventId(other.id),
    ]);
    expect(h.dns.mxQueries).toBe(2);
  });

  it('publishes the result it committed from its outbox when the bus refused it, under the same event id', async () => {
    const faulty = faultyTestBus(logger);
    h = await startEnrichmentHarness({ bus: faulty.make });
    const { bus } = h;
    const { faults } = faulty;
    faults.failNext(1, 'lead.enriched');
    const event = await bus.publish('lead.captured', captured());
    await waitFor('the failed attempt', () => faults.refused === 1);
    // DNS changes its answer before the relay's attempt: it still publishes what was found first.
    h.dns.mx = [];
    await bus.publishEnvelope(event);

    await waitFor('lead.enriched from the outbox relay', () => h.enriched.length === 1, 5000);
    expect(h.enriched[0]).toMatchObject({
      id: enrichedEventId(event.id),
      data: { enrichment: { email: { mx: 'found', deliverable: 'yes' } } },
    });
    expect(h.dns.mxQueries).toBe(1);
    await h.handled.settled('both deliveries', [event, event]);
    await h.drained();
    expect(h.enriched).toHaveLength(1);
  });

  it('reports deliverability as unknown when MX lookups are off', async () => {
    h = await startEnrichmentHarness({ env: { ENRICHMENT_MX_LOOKUP: 'off' } });
    await h.bus.publish('lead.captured', captured({ email: 'jane@acme-corp.com' }));
    await waitFor('lead.enriched', () => h.enriched.length === 1);
    expect(h.enriched[0]).toMatchObject({
      data: { enrichment: { email: { valid: true, mx: 'unknown', deliverable: 'unknown' } } },
    });
    expect(h.dns.mxQueries).toBe(0);
  });

  it('enriches a flagged duplicate like any lead', async () => {
    h = await startEnrichmentHarness();
    const data = { ...captured(), isDuplicate: true, duplicateOf: crypto.randomUUID() };
    await h.bus.publish('lead.captured', { ...data, lead: leadSnapshot({ company: 'Initech' }) });
    await waitFor('lead.enriched', () => h.enriched.length === 1);
    expect(h.enriched[0]).toMatchObject({
      data: { leadId: data.leadId, enrichment: { company: { name: 'Initech', source: 'payload' } } },
    });
  });
});
