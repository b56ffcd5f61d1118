import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type DeliveryQuery, inPath, unwrap } from '../api/client.js';
import { useStream } from '../api/stream.js';
import { DateRangeFields, SelectField } from '../components/fields.js';
import { Form } from '../components/forms.js';
import { CardTable, Pager } from '../components/lists.js';
import { TitledSection } from '../components/sections.js';
import {
  ActionButton,
  ErrorMessage,
  formatDate,
  useAction,
  useLoad,
  useThrottled,
} from '../components/ui.js';
import { ALL_EVENTS, EVENT_TYPES } from './WebhookSubscriptionForm.js';

const DELIVERY_STATUSES = ['pending', 'delivering', 'succeeded', 'failed', 'cancelled', 'held'] as const;
const DELIVERIES_PER_PAGE = 20;
/** While a delivery log is open, lead events make new deliveries: it is asked again at most this often. */
const LOG_REFRESH_INTERVAL_MS = 3000;
/** How long the log follows an announced event for its delivery (a filter may exclude it). */
const AWAIT_DELIVERY_MS = 30_000;

/** A subscription's deliveries, newest first, filtered and paged, following new ones live. */
export function DeliveryLog(props: {
  subscriptionId: string;
  eventTypes: string[];
  version: number;
  /** An admin's, of a subscription not paused. */
  canRedeliver: boolean;
}) {
  const { subscriptionId, eventTypes, version } = props;
  const [filters, setFilters] = useState<{ status?: string; eventType?: string; from?: string; to?: string }>(
    {},
  );
  const [page, setPage] = useState(1);
  const query: DeliveryQuery = {
    page,
    limit: DELIVERIES_PER_PAGE,
    ...(filters.status ? { status: filters.status as never } : {}),
    ...(filters.eventType ? { eventType: filters.eventType as never } : {}),
    ...(filters.from ? { startDate: filters.from } : {}),
    ...(filters.to ? { endDate: filters.to } : {}),
  };
  const log = useLoad(
    async () =>
      unwrap(
        await api.GET('/api/webhook-subscriptions/{id}/deliveries', {
          params: { path: { id: subscriptionId }, query },
        }),
      ),
    [subscriptionId, JSON.stringify(query), version],
  );
  const refresh = useThrottled(() => void log.reload(), LOG_REFRESH_INTERVAL_MS);
  // Events the stream announced whose delivery the log does not show yet: the webhooks worker records
  // it after the event, and one commit can bring several events (a lead's whole chain), so a single
  // refresh on their arrival can come before any of them is recorded.
  const awaited = useRef(new Map<string, number>());
  const shownEvents = new Set((log.data?.data ?? []).map((delivery) => delivery.eventId));
  for (const [eventId, until] of awaited.current) {
    if (shownEvents.has(eventId) || until < Date.now()) awaited.current.delete(eventId);
  }
  // A delivery under way, due within the interval, or still to be recorded is followed until it settles.
  const inFlight =
    awaited.current.size > 0 ||
    (log.data?.data ?? []).some(
      (delivery) =>
        delivery.status === 'delivering' ||
        (delivery.status === 'pending' &&
          new Date(delivery.nextAttemptAt ?? 0).getTime() - Date.now() < LOG_REFRESH_INTERVAL_MS),
    );
  useEffect(() => {
    if (!inFlight || log.loading) return;
    const timer = setTimeout(refresh, LOG_REFRESH_INTERVAL_MS);
    return () => clearTimeout(timer);
  }, [inFlight, log.loading, log.data]);
  // The events the subscription takes become deliveries: the first page follows them.
  useStream((message) => {
    if (page !== 1) return;
    if (message.type === 'reset') return refresh();
    if (eventTypes.includes(ALL_EVENTS) || eventTypes.includes(message.type)) {
      awaited.current.set(message.id, Date.now() + AWAIT_DELIVERY_MS);
      refresh();
    }
  });
  const redeliver = useAction();
  const redeliverOne = async (deliveryId: string) =>
    unwrap(
      await api.POST(
        '/api/webhook-subscriptions/{id}/deliveries/{deliveryId}/redeliver',
        inPath({ id: subscriptionId, deliveryId }),
      ),
    );
  const filter = (changes: Partial<typeof filters>) => {
    setFilters((current) => ({ ...current, ...changes }));
    setPage(1);
  };
  const pagination = log.data?.pagination;

  return (
    <TitledSection
      id="deliveries-title"
      level={3}
      title="Delivery log"
      actions={
        <button type="button" onClick={() => void log.reload()} disabled={log.loading}>
          Refresh
        </button>
      }
    >
      <Form class="filters" aria-label="Delivery filters">
        <SelectField
          label="Delivery status"
          none="Any"
          choices={DELIVERY_STATUSES}
          value={filters.status ?? ''}
          onValue={(status) => filter({ status })}
        />
        <SelectField
          label="Event type"
          none="Any"
          choices={[...EVENT_TYPES, 'webhook.test']}
          value={filters.eventType ?? ''}
          onValue={(eventType) => filter({ eventType })}
        />
        <DateRangeFields
          from={filters.from ?? ''}
          to={filters.to ?? ''}
          onFrom={(from) => filter({ from })}
          onTo={(to) => filter({ to })}
        />
      </Form>
      <ErrorMessage error={log.error ?? redeliver.error} />
      <CardTable
        class="deliveries"
        busy={log.loading}
        caption="Deliveries, newest first"
        columns={[
          'Created',
          'Event',
          'Status',
          'Attempts',
          'Last answer',
          { label: 'Actions', hidden: true },
        ]}
        after={
          log.data && log.data.data.length === 0 && <p class="empty">No delivery matches these filters.</p>
        }
      >
        {(log.data?.data ?? []).map((delivery) => (
          <tr key={delivery.id} data-delivery-id={delivery.id} data-status={delivery.status}>
            <td data-label="Created">{formatDate(delivery.createdAt)}</td>
            <td data-label="Event">{delivery.eventType}</td>
            <td data-label="Status">
              {delivery.status}
              {delivery.nextAttemptAt && delivery.status === 'pending' && (
                <span class="muted"> · next {formatDate(delivery.nextAttemptAt)}</span>
              )}
            </td>
            <td data-label="Attempts" class="number">
              {delivery.attempts}
            </td>
            <td data-label="Last answer">
              {delivery.lastStatusCode !== null ? `HTTP ${delivery.lastStatusCode}` : '—'}
              {delivery.lastError && <span class="error"> {delivery.lastError}</span>}
              <details>
                <summary>Attempts and payload</summary>
                <ol>
                  {delivery.attemptLog.map((attempt) => (
                    <li key={attempt.number}>
                      {formatDate(attempt.attemptedAt)}: {attempt.statusCode ?? 'no answer'} in{' '}
                      {attempt.durationMs} ms{attempt.error ? ` — ${attempt.error}` : ''}
                      {attempt.responseExcerpt && <pre>{attempt.responseExcerpt}</pre>}
                    </li>
                  ))}
                </ol>
                <pre>{JSON.stringify(delivery.payload, null, 2)}</pre>
              </details>
            </td>
            <td>
              {props.canRedeliver && (
                <ActionButton
                  action={redeliver}
                  disabled={delivery.status === 'delivering'}
                  label={`Redeliver ${delivery.eventType} of ${formatDate(delivery.createdAt)}`}
                  onRun={() => redeliverOne(delivery.id)}
                  onDone={log.reload}
                >
                  Redeliver
                </ActionButton>
              )}
            </td>
          </tr>
        ))}
      </CardTable>
      {pagination && pagination.pages > 1 && (
        <Pager
          label="Delivery pages"
          summary={
            <span>
              {pagination.total} deliveries · page {pagination.page} of {pagination.pages}
            </span>
          }
          page={page}
          pages={pagination.pages}
          onPage={setPage}
        />
      )}
    </TitledSection>
  );
}
