import { WEBHOOK_EVENT_TYPES } from '@lead-capture/contracts/lead-events';
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  api,
  type DeliveryQuery,
  QUALIFICATIONS,
  type Source,
  unwrap,
  type WebhookDelivery,
  type WebhookSubscription,
} from '../api/client.js';
import { session } from '../api/session.js';
import { useStream } from '../api/stream.js';
import {
  ConfirmButton,
  CopyButton,
  ErrorMessage,
  formatDate,
  Status,
  useAction,
  useLoad,
  useThrottled,
} from '../components/ui.js';
import { updateQuery, useLocation } from '../router.js';

/** The event types a subscription may take (`*`: every one of them, also those added later). */
const EVENT_TYPES = WEBHOOK_EVENT_TYPES;
const ALL_EVENTS = '*';
const DELIVERY_STATUSES = ['pending', 'delivering', 'succeeded', 'failed', 'cancelled', 'held'] as const;
const DELIVERIES_PER_PAGE = 20;
/** While a delivery log is open, lead events make new deliveries: it is asked again at most this often. */
const LOG_REFRESH_INTERVAL_MS = 3000;
/** How long the log follows an announced event for its delivery (a filter may exclude it). */
const AWAIT_DELIVERY_MS = 30_000;

type EventType = (typeof EVENT_TYPES)[number] | typeof ALL_EVENTS;
type Qualification = (typeof QUALIFICATIONS)[number];

interface Draft {
  url: string;
  description: string;
  eventTypes: EventType[];
  sourceIds: string[];
  qualifications: Qualification[];
  alertEmails: string;
  active: boolean;
}

const EMPTY_DRAFT: Draft = {
  url: '',
  description: '',
  eventTypes: ['lead.captured'],
  sourceIds: [],
  qualifications: [],
  alertEmails: '',
  active: true,
};

function draftOf(subscription: WebhookSubscription): Draft {
  return {
    url: subscription.url,
    description: subscription.description ?? '',
    eventTypes: subscription.eventTypes as EventType[],
    sourceIds: subscription.filters.sourceIds ?? [],
    qualifications: subscription.filters.qualifications ?? [],
    alertEmails: subscription.alertEmails.join(', '),
    active: subscription.active,
  };
}

/** The create / update body of a draft (the API checks the URL, the e-mails and the rest). */
function bodyOf(draft: Draft) {
  return {
    url: draft.url.trim(),
    description: draft.description.trim() || null,
    eventTypes: draft.eventTypes,
    filters: { sourceIds: draft.sourceIds, qualifications: draft.qualifications },
    alertEmails: draft.alertEmails
      .split(/[,\s]+/)
      .map((email) => email.trim())
      .filter(Boolean),
    active: draft.active,
  };
}

/** Why a subscription is paused, in words. */
const PAUSED_BECAUSE: Record<NonNullable<WebhookSubscription['pausedReason']>, string> = {
  creator_deactivated: 'the admin it stands for was deactivated',
  creator_demoted: 'the admin it stands for is no longer an admin',
  creator_deleted: 'the admin it stands for was deleted',
};

function stateOf(subscription: WebhookSubscription): string {
  if (!subscription.active) {
    if (subscription.disabledReason === 'gone') return 'disabled: the receiver answered 410 Gone';
    if (subscription.disabledReason === 'failing') return 'disabled: failing for days';
    return 'inactive';
  }
  if (subscription.pausedReason) return `paused: ${PAUSED_BECAUSE[subscription.pausedReason]}`;
  return 'active';
}

/** Subscriptions send lead data out of the workspace: only an admin changes them (the API says so too). */
function isAdmin(): boolean {
  return session.user?.role === 'admin';
}

/**
 * Outbound webhooks (`/api/webhook-subscriptions`): the subscriptions that push lead events to a
 * team's other tools, each with its signing secret (shown once), a test send and its delivery log.
 */
export function Webhooks() {
  const { query } = useLocation();
  const subscriptions = useLoad(async () => unwrap(await api.GET('/api/webhook-subscriptions')), []);
  const sources = useLoad(async () => unwrap(await api.GET('/api/sources')), []);
  const selectedId = query.get('subscription') ?? undefined;
  const selected = subscriptions.data?.find((subscription) => subscription.id === selectedId);
  const [secret, setSecret] = useState<{ value: string; note: string } | undefined>(undefined);
  const [creating, setCreating] = useState(false);
  const admin = isAdmin();

  const select = (id: string | undefined) => updateQuery({ subscription: id });

  return (
    <section aria-labelledby="webhooks-title">
      <div class="toolbar">
        <h1 id="webhooks-title">Outbound webhooks</h1>
        {admin && (
          <button type="button" class="primary" onClick={() => setCreating(true)} disabled={creating}>
            New subscription
          </button>
        )}
      </div>
      <p class="muted">
        Lead events are POSTed as JSON to each subscription's URL, signed as the Standard Webhooks
        specification says (<code>webhook-id</code>, <code>webhook-timestamp</code>,{' '}
        <code>webhook-signature</code>), and retried for about three days when the receiver fails.
        {!admin && ' Only an admin can create, change or resume subscriptions.'}
      </p>
      {secret && (
        <SecretNotice secret={secret.value} note={secret.note} onDone={() => setSecret(undefined)} />
      )}
      {creating && (
        <SubscriptionForm
          title="New subscription"
          initial={EMPTY_DRAFT}
          sources={sources.data ?? []}
          submitLabel="Create subscription"
          onCancel={() => setCreating(false)}
          onSubmit={async (draft) => {
            const created = unwrap(await api.POST('/api/webhook-subscriptions', { body: bodyOf(draft) }));
            setCreating(false);
            setSecret({
              value: created.secret,
              note: 'The signing secret, shown this once only: copy it now.',
            });
            await subscriptions.reload();
            select(created.id);
          }}
        />
      )}
      <ErrorMessage error={subscriptions.error} />
      {subscriptions.loading && !subscriptions.data && <Status>Loading the subscriptions…</Status>}
      {subscriptions.data && subscriptions.data.length === 0 && !creating && (
        <p class="empty">No subscription yet: create one to push lead events to another tool.</p>
      )}
      {subscriptions.data && subscriptions.data.length > 0 && (
        <div class="table-wrap">
          <table class="card-table">
            <caption class="visually-hidden">Webhook subscriptions</caption>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">State</th>
                <th scope="col" class="wide-only">
                  Created
                </th>
              </tr>
            </thead>
            <tbody>
              {subscriptions.data.map((subscription) => (
                <tr key={subscription.id} aria-current={subscription.id === selectedId ? 'true' : undefined}>
                  <td data-label="URL">
                    <button type="button" class="link mono" onClick={() => select(subscription.id)}>
                      {subscription.url}
                    </button>
                    {subscription.description && <span class="muted"> · {subscription.description}</span>}
                  </td>
                  <td data-label="Events">
                    {subscription.eventTypes.includes(ALL_EVENTS)
                      ? 'all'
                      : subscription.eventTypes.join(', ')}
                  </td>
                  <td data-label="State">
                    {stateOf(subscription)}
                    {subscription.active && subscription.failingSince && (
                      <>
                        {' '}
                        <span class="badge badge-failing">failing</span>{' '}
                        <span class="muted">
                          every attempt since {formatDate(subscription.failingSince)} failed; retried
                          automatically
                        </span>
                      </>
                    )}
                  </td>
                  <td data-label="Created" class="wide-only">
                    {formatDate(subscription.createdAt)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {selected && (
        <SubscriptionDetail
          key={selected.id}
          subscription={selected}
          admin={admin}
          sources={sources.data ?? []}
          onChanged={() => void subscriptions.reload()}
          onSecret={(value, note) => setSecret({ value, note })}
          onDeleted={() => {
            select(undefined);
            void subscriptions.reload();
          }}
        />
      )}
    </section>
  );
}

function SecretNotice(props: { secret: string; note: string; onDone: () => void }) {
  return (
    <div class="notice" role="alert">
      <p>{props.note}</p>
      <input type="text" readOnly class="mono" value={props.secret} aria-label="Signing secret" />
      <CopyButton text={props.secret} label="Copy secret" />
      <button type="button" class="ghost" onClick={props.onDone}>
        Done
      </button>
    </div>
  );
}

function toggled<T>(list: T[], value: T, on: boolean): T[] {
  return on ? [...list.filter((item) => item !== value), value] : list.filter((item) => item !== value);
}

function SubscriptionForm(props: {
  title: string;
  initial: Draft;
  sources: Source[];
  submitLabel: string;
  onSubmit: (draft: Draft) => Promise<void>;
  onCancel?: () => void;
}) {
  const [draft, setDraft] = useState<Draft>(props.initial);
  const save = useAction();
  const set = (changes: Partial<Draft>) => setDraft((current) => ({ ...current, ...changes }));
  const all = draft.eventTypes.includes(ALL_EVENTS);
  const formId = props.title.toLowerCase().replace(/[^a-z]+/g, '-');

  return (
    <form
      class="editor"
      aria-labelledby={`${formId}-title`}
      onSubmit={(event) => {
        event.preventDefault();
        void save.run(() => props.onSubmit(draft));
      }}
    >
      <h2 id={`${formId}-title`}>{props.title}</h2>
      <label>
        Target URL
        <input
          type="url"
          required
          maxLength={2048}
          placeholder="https://hooks.example.com/lead-capture"
          value={draft.url}
          onInput={(event) => set({ url: event.currentTarget.value })}
        />
      </label>
      <label>
        Description (optional)
        <input
          type="text"
          maxLength={500}
          value={draft.description}
          onInput={(event) => set({ description: event.currentTarget.value })}
        />
      </label>
      <fieldset>
        <legend>Events</legend>
        <label class="check">
          <input
            type="checkbox"
            checked={all}
            onChange={(event) =>
              set({ eventTypes: event.currentTarget.checked ? [ALL_EVENTS] : ['lead.captured'] })
            }
          />
          All events
        </label>
        {EVENT_TYPES.map((type) => (
          <label class="check" key={type}>
            <input
              type="checkbox"
              disabled={all}
              checked={all || draft.eventTypes.includes(type)}
              onChange={(event) =>
                set({ eventTypes: toggled(draft.eventTypes, type, event.currentTarget.checked) })
              }
            />
            {type}
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>Only leads of these sources (none checked: every source)</legend>
        {props.sources.map((source) => (
          <label class="check" key={source.id}>
            <input
              type="checkbox"
              checked={draft.sourceIds.includes(source.id)}
              onChange={(event) =>
                set({ sourceIds: toggled(draft.sourceIds, source.id, event.currentTarget.checked) })
              }
            />
            {source.name}
          </label>
        ))}
        {props.sources.length === 0 && <p class="muted">No source yet.</p>}
      </fieldset>
      <fieldset>
        <legend>Only leads qualified as (none checked: every lead, scored or not)</legend>
        {QUALIFICATIONS.map((qualification) => (
          <label class="check" key={qualification}>
            <input
              type="checkbox"
              checked={draft.qualifications.includes(qualification)}
              onChange={(event) =>
                set({
                  qualifications: toggled(draft.qualifications, qualification, event.currentTarget.checked),
                })
              }
            />
            {qualification}
          </label>
        ))}
      </fieldset>
      <label>
        Alert e-mails when the subscription is disabled (comma-separated, optional)
        <input
          type="text"
          value={draft.alertEmails}
          onInput={(event) => set({ alertEmails: event.currentTarget.value })}
        />
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={draft.active}
          onChange={(event) => set({ active: event.currentTarget.checked })}
        />
        Active
      </label>
      <ErrorMessage error={save.error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={save.pending || draft.eventTypes.length === 0}>
          {props.submitLabel}
        </button>
        {props.onCancel && (
          <button type="button" class="ghost" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

function SubscriptionDetail(props: {
  subscription: WebhookSubscription;
  admin: boolean;
  sources: Source[];
  onChanged: () => void;
  onSecret: (secret: string, note: string) => void;
  onDeleted: () => void;
}) {
  const { subscription } = props;
  const path = { params: { path: { id: subscription.id } } };
  const action = useAction();
  const [testResult, setTestResult] = useState<WebhookDelivery | undefined>(undefined);
  const [logVersion, setLogVersion] = useState(0);
  const [deliverHeld, setDeliverHeld] = useState(true);

  return (
    <article class="subscription-detail" aria-labelledby="subscription-title">
      <h2 id="subscription-title" class="mono">
        {subscription.url}
      </h2>
      <p class="muted">
        State: {stateOf(subscription)}
        {subscription.failingSince && ` · failing since ${formatDate(subscription.failingSince)}`}
        {subscription.previousSecretExpiresAt &&
          ` · the previous secret also signs until ${formatDate(subscription.previousSecretExpiresAt)}`}
      </p>
      {subscription.pausedReason && (
        <div class="notice" role="status" data-testid="paused-notice">
          <p>
            Paused since {formatDate(subscription.pausedAt ?? subscription.updatedAt)}:{' '}
            {PAUSED_BECAUSE[subscription.pausedReason]}. Nothing is sent; its events are held in the delivery
            log until an admin resumes it, which makes it stand for that admin.
          </p>
          {props.admin && (
            <div class="actions">
              <label class="check">
                <input
                  type="checkbox"
                  checked={deliverHeld}
                  onChange={(event) => setDeliverHeld(event.currentTarget.checked)}
                />
                Send the events held while paused
              </label>
              <button
                type="button"
                class="primary"
                disabled={action.pending}
                onClick={() =>
                  void action.run(async () => {
                    unwrap(
                      await api.POST('/api/webhook-subscriptions/{id}/resume', {
                        ...path,
                        body: { deliverHeld },
                      }),
                    );
                    props.onChanged();
                    setLogVersion((version) => version + 1);
                  })
                }
              >
                Resume subscription
              </button>
            </div>
          )}
        </div>
      )}
      {props.admin && (
        <div class="actions">
          <button
            type="button"
            disabled={action.pending}
            onClick={() =>
              void action.run(async () => {
                setTestResult(unwrap(await api.POST('/api/webhook-subscriptions/{id}/test', path)));
                setLogVersion((version) => version + 1);
              })
            }
          >
            Send test event
          </button>
          <ConfirmButton
            question="Rotate the signing secret? The current one keeps signing beside the new one for a while."
            action={action}
            onConfirm={async () => {
              const rotated = unwrap(await api.POST('/api/webhook-subscriptions/{id}/rotate-secret', path));
              props.onSecret(
                rotated.secret,
                `The new signing secret, shown this once only: copy it now. The previous one also signs until ${formatDate(rotated.previousSecretExpiresAt)}.`,
              );
              props.onChanged();
            }}
          >
            Rotate secret
          </ConfirmButton>
          <ConfirmButton
            danger
            question={`Delete the subscription to ${subscription.url} and its delivery log?`}
            action={action}
            onConfirm={async () => {
              unwrap(await api.DELETE('/api/webhook-subscriptions/{id}', path));
              props.onDeleted();
            }}
          >
            Delete subscription
          </ConfirmButton>
        </div>
      )}
      <ErrorMessage error={action.error} />
      {testResult && (
        <p role="status" data-testid="test-send-result">
          Test event {testResult.status}
          {testResult.lastStatusCode !== null && `: HTTP ${testResult.lastStatusCode}`}
          {testResult.attemptLog[0] && ` in ${testResult.attemptLog[0].durationMs} ms`}
          {testResult.lastError && ` (${testResult.lastError})`}
        </p>
      )}
      {props.admin && (
        <SubscriptionForm
          key={subscription.updatedAt}
          title="Edit subscription"
          initial={draftOf(subscription)}
          sources={props.sources}
          submitLabel="Save changes"
          onSubmit={async (draft) => {
            unwrap(await api.PATCH('/api/webhook-subscriptions/{id}', { ...path, body: bodyOf(draft) }));
            props.onChanged();
          }}
        />
      )}
      <DeliveryLog
        subscriptionId={subscription.id}
        eventTypes={subscription.eventTypes}
        version={logVersion}
        canRedeliver={props.admin && !subscription.pausedReason}
      />
    </article>
  );
}

function DeliveryLog(props: {
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
  const filter = (changes: Partial<typeof filters>) => {
    setFilters((current) => ({ ...current, ...changes }));
    setPage(1);
  };
  const pagination = log.data?.pagination;

  return (
    <section aria-labelledby="deliveries-title">
      <div class="toolbar">
        <h3 id="deliveries-title">Delivery log</h3>
        <button type="button" onClick={() => void log.reload()} disabled={log.loading}>
          Refresh
        </button>
      </div>
      <form class="filters" aria-label="Delivery filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Delivery status
          <select value={filters.status ?? ''} onChange={(e) => filter({ status: e.currentTarget.value })}>
            <option value="">Any</option>
            {DELIVERY_STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </label>
        <label>
          Event type
          <select
            value={filters.eventType ?? ''}
            onChange={(e) => filter({ eventType: e.currentTarget.value })}
          >
            <option value="">Any</option>
            {[...EVENT_TYPES, 'webhook.test'].map((type) => (
              <option key={type} value={type}>
                {type}
              </option>
            ))}
          </select>
        </label>
        <label>
          From
          <input
            type="date"
            value={filters.from ?? ''}
            onChange={(e) => filter({ from: e.currentTarget.value })}
          />
        </label>
        <label>
          To
          <input
            type="date"
            value={filters.to ?? ''}
            onChange={(e) => filter({ to: e.currentTarget.value })}
          />
        </label>
      </form>
      <ErrorMessage error={log.error ?? redeliver.error} />
      <div class="table-wrap">
        <table class="card-table deliveries" aria-busy={log.loading}>
          <caption class="visually-hidden">Deliveries, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
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
                    <button
                      type="button"
                      disabled={redeliver.pending || delivery.status === 'delivering'}
                      aria-label={`Redeliver ${delivery.eventType} of ${formatDate(delivery.createdAt)}`}
                      onClick={() =>
                        void redeliver.run(async () => {
                          unwrap(
                            await api.POST(
                              '/api/webhook-subscriptions/{id}/deliveries/{deliveryId}/redeliver',
                              { params: { path: { id: subscriptionId, deliveryId: delivery.id } } },
                            ),
                          );
                          await log.reload();
                        })
                      }
                    >
                      Redeliver
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {log.data && log.data.data.length === 0 && <p class="empty">No delivery matches these filters.</p>}
      </div>
      {pagination && pagination.pages > 1 && (
        <nav class="pagination" aria-label="Delivery pages">
          <span>
            {pagination.total} deliveries · page {pagination.page} of {pagination.pages}
          </span>
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous
          </button>
          <button type="button" disabled={page >= pagination.pages} onClick={() => setPage(page + 1)}>
            Next
          </button>
        </nav>
      )}
    </section>
  );
}
