import { api, type LeadDetail, type TimelineEvent, type User, unwrap } from '../api/client.js';
import { session } from '../api/session.js';
import { TitledSection } from '../components/sections.js';
import { ErrorMessage, FieldList, formatDate, useLoad } from '../components/ui.js';
import {
  describeActor,
  describeEnrollment,
  describeEvent,
  describeNotification,
  enrichmentSections,
  type NameBook,
} from './lead-history.js';

/** What happened to a lead, in words: its timeline, with who did each thing. */
export function Timeline({
  events,
  error,
  users,
}: {
  events: TimelineEvent[] | undefined;
  error?: string;
  users: User[];
}) {
  // Stage names for stage changes; users come from the list the leads screen loaded.
  const pipelines = useLoad(async () => unwrap(await api.GET('/api/pipelines')), []);
  const me = session.user;
  const book: NameBook = {
    users: me && !users.some((user) => user.id === me.id) ? [...users, me] : users,
    pipelines: pipelines.data ?? [],
  };
  return (
    <TitledSection id="lead-timeline" level={3} title="Timeline">
      <ErrorMessage error={error} />
      <ol class="timeline">
        {(events ?? []).map((event) => {
          const actor = describeActor(book, event.actor);
          return (
            <li key={event.id} data-type={event.type}>
              <time dateTime={event.occurredAt}>{formatDate(event.occurredAt)}</time>
              <span>
                {describeEvent(book, event.type, event.data)}
                {actor && <span class="muted"> {actor}</span>}
              </span>
            </li>
          );
        })}
      </ol>
    </TitledSection>
  );
}

/** The team notifications sent about the lead and its sequence enrolments. */
export function Deliveries({ lead }: { lead: LeadDetail }) {
  return (
    <TitledSection id="lead-deliveries" level={3} title="Notifications and sequences">
      <h4>Team notifications</h4>
      {lead.notifications.length === 0 ? (
        <p class="muted">None sent.</p>
      ) : (
        <ul>
          {lead.notifications.map((entry, index) => (
            <li key={String(entry.id ?? index)}>{describeNotification(entry)}</li>
          ))}
        </ul>
      )}
      <h4>Sequences</h4>
      {lead.enrollments.length === 0 ? (
        <p class="muted">Not enrolled in a sequence.</p>
      ) : (
        <ul>
          {lead.enrollments.map((entry, index) => (
            <li key={String(entry.enrollmentId ?? index)}>{describeEnrollment(entry)}</li>
          ))}
        </ul>
      )}
    </TitledSection>
  );
}

/** What enrichment found out about the lead, a section per check. */
export function Enrichment({ lead }: { lead: LeadDetail }) {
  if (!lead.enrichment) return null;
  const sections = enrichmentSections(lead.enrichment as Record<string, unknown>);
  if (sections.length === 0) return null;
  return (
    <TitledSection id="lead-enrichment" level={3} title="Enrichment">
      {sections.map((section) => (
        <div key={section.title} class="enrichment-group">
          <h4>{section.title}</h4>
          <FieldList rows={section.rows} />
        </div>
      ))}
    </TitledSection>
  );
}
