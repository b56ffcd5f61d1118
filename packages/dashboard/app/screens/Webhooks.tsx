import { useState } from 'preact/hooks';
import {
  api,
  inPath,
  type Source,
  unwrap,
  type WebhookDelivery,
  type WebhookSubscription,
} from '../api/client.js';
import { session } from '../api/session.js';
import { CheckField } from '../components/fields.js';
import { ShownOnce } from '../components/forms.js';
import { CardTable } from '../components/lists.js';
import { TitledSection } from '../components/sections.js';
import { ActionButton, ErrorMessage, formatDate, Status, useAction, useLoad } from '../components/ui.js';
import { updateQuery, useLocation } from '../router.js';
import { DeliveryLog } from './WebhookDeliveryLog.js';
import { ALL_EVENTS, bodyOf, draftOf, EMPTY_DRAFT, SubscriptionForm } from './WebhookSubscriptionForm.js';

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
    <TitledSection
      id="webhooks-title"
      title="Outbound webhooks"
      actions={
        admin && (
          <button type="button" class="primary" onClick={() => setCreating(true)} disabled={creating}>
            New subscription
          </button>
        )
      }
    >
      <p class="muted">
        Lead events are POSTed as JSON to each subscription's URL, signed as the Standard Webhooks
        specification says (<code>webhook-id</code>, <code>webhook-timestamp</code>,{' '}
        <code>webhook-signature</code>), and retried for about three days when the receiver fails.
        {!admin && ' Only an admin can create, change or resume subscriptions.'}
      </p>
      {secret && (
        <ShownOnce
          note={secret.note}
          value={secret.value}
          valueLabel="Signing secret"
          copyLabel="Copy secret"
          onDone={() => setSecret(undefined)}
        />
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
        <CardTable
          caption="Webhook subscriptions"
          columns={['URL', 'Events', 'State', { label: 'Created', class: 'wide-only' }]}
        >
          {subscriptions.data.map((subscription) => (
            <tr key={subscription.id} aria-current={subscription.id === selectedId ? 'true' : undefined}>
              <td data-label="URL">
                <button type="button" class="link mono" onClick={() => select(subscription.id)}>
                  {subscription.url}
                </button>
                {subscription.description && <span class="muted"> · {subscription.description}</span>}
              </td>
              <td data-label="Events">
                {subscription.eventTypes.includes(ALL_EVENTS) ? 'all' : subscription.eventTypes.join(', ')}
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
        </CardTable>
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
    </TitledSection>
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
  const path = inPath({ id: subscription.id });
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
              <CheckField
                label="Send the events held while paused"
                checked={deliverHeld}
                onChange={(checked) => setDeliverHeld(checked)}
              />
              <ActionButton
                class="primary"
                action={action}
                onRun={async () =>
                  unwrap(
                    await api.POST('/api/webhook-subscriptions/{id}/resume', {
                      ...path,
                      body: { deliverHeld },
                    }),
                  )
                }
                onDone={() => {
                  props.onChanged();
                  setLogVersion((version) => version + 1);
                }}
              >
                Resume subscription
              </ActionButton>
            </div>
          )}
        </div>
      )}
      {props.admin && (
        <div class="actions">
          <ActionButton
            action={action}
            onRun={async () => {
              setTestResult(unwrap(await api.POST('/api/webhook-subscriptions/{id}/test', path)));
              setLogVersion((version) => version + 1);
            }}
          >
            Send test event
          </ActionButton>
          <ActionButton
            question="Rotate the signing secret? The current one keeps signing beside the new one for a while."
            action={action}
            onRun={async () => {
              const rotated = unwrap(await api.POST('/api/webhook-subscriptions/{id}/rotate-secret', path));
              props.onSecret(
                rotated.secret,
                `The new signing secret, shown this once only: copy it now. The previous one also signs until ${formatDate(rotated.previousSecretExpiresAt)}.`,
              );
              props.onChanged();
            }}
          >
            Rotate secret
          </ActionButton>
          <ActionButton
            class="danger"
            question={`Delete the subscription to ${subscription.url} and its delivery log?`}
            action={action}
            onRun={async () => unwrap(await api.DELETE('/api/webhook-subscriptions/{id}', path))}
            onDone={props.onDeleted}
          >
            Delete subscription
          </ActionButton>
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
