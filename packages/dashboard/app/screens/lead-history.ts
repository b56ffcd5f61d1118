/**
 * What a lead's timeline entries, enrolments and enrichment say, in words: users, stages and
 * sequences by name, never an id. Names come from lists the dashboard already loads (users,
 * pipelines); an entry carries the names it can (tags, sequences, sources).
 */

export interface NameBook {
  users: ReadonlyArray<{ id: string; name: string }>;
  pipelines: ReadonlyArray<{ id: string; name: string; stages: ReadonlyArray<{ id: string; name: string }> }>;
}

type Data = Record<string, unknown>;

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined;
const record = (value: unknown): Data =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Data) : {};
const list = (value: unknown): Data[] => (Array.isArray(value) ? value.map(record) : []);

export function userName(book: NameBook, id: unknown): string {
  if (typeof id !== 'string') return 'nobody';
  const user = book.users.find((candidate) => candidate.id === id);
  // Users not loaded yet (or not allowed): say less rather than something wrong.
  return user?.name ?? (book.users.length > 0 ? 'a deleted user' : 'a user');
}

/** "Qualified", or "Qualified (Partners)" when the stage is in another pipeline than `samePipeline`. */
function stageName(book: NameBook, place: Data, samePipeline?: unknown): string {
  const pipeline = book.pipelines.find((item) => item.id === place.pipelineId);
  if (!place.stageId) return 'no stage';
  const stage = pipeline?.stages.find((item) => item.id === place.stageId);
  // Pipelines not loaded yet (there is always one once they are): say less rather than something wrong.
  if (!stage) return book.pipelines.length > 0 ? 'a deleted stage' : 'a stage';
  return pipeline && samePipeline !== undefined && samePipeline !== place.pipelineId
    ? `${stage.name} (${pipeline.name})`
    : stage.name;
}

function personOf(value: Data): string {
  const name = [text(value.firstName), text(value.lastName)].filter(Boolean).join(' ');
  const email = text(value.email);
  if (name && email) return `${name} <${email}>`;
  return name || email || text(value.company) || 'a lead without name or e-mail';
}

/** "by Ada Lovelace", "by an API key", or nothing for the system's own steps. */
export function describeActor(book: NameBook, actor: { userId?: string; apiKeyId?: string } | null): string {
  if (actor?.userId) return `by ${userName(book, actor.userId)}`;
  if (actor?.apiKeyId) return 'by an API key';
  return '';
}

export function describeEvent(book: NameBook, type: string, data: Data): string {
  switch (type) {
    case 'created': {
      const source = text(record(data.source).name);
      return source ? `Captured from ${source}` : 'Captured';
    }
    case 'imported':
      return text(data.row) ? `Imported from a CSV file (row ${text(data.row)})` : 'Imported from a CSV file';
    case 'duplicate_detected':
      return 'Marked as a duplicate of an earlier lead (same e-mail or phone)';
    case 'remapped': {
      const fields = Array.isArray(data.changedFields) ? data.changedFields.map(String) : [];
      return fields.length
        ? `Read again with the source's new mapping: ${fields.join(', ')} changed`
        : "Read again with the source's new mapping: nothing changed";
    }
    case 'enriched':
      return `Enriched: ${enrichmentSummary(data)}`;
    case 'scored':
      return `Scored ${text(data.score) ?? '?'}${text(data.qualification) ? ` (${text(data.qualification)})` : ''}`;
    case 'notified': {
      const sent = list(data.notifications);
      return sent.length
        ? `Team notified: ${sent.map((entry) => `${text(entry.to)} (${text(entry.status)})`).join(', ')}`
        : 'No team notification sent (none is set up for this lead)';
    }
    case 'enrolled': {
      const enrolments = list(data.enrollments);
      return enrolments.length
        ? `Enrolled in ${enrolments.map((entry) => `"${text(entry.sequenceName)}"`).join(', ')}`
        : 'Matched no active sequence: not enrolled';
    }
    case 'sequence_step_sent':
      return `Sequence "${text(data.sequenceName)}": step ${text(data.step)} ${stepStatus(text(data.status))}`;
    case 'enrollment_stopped':
      return `Sequence "${text(data.sequenceName)}" stopped: ${reasonText(text(data.reason))}`;
    case 'status_changed':
      return `Status ${text(data.from)} → ${text(data.to)}`;
    case 'stage_changed': {
      const from = record(data.from);
      const to = record(data.to);
      const reason = text(data.reason);
      const moved = from.pipelineId
        ? `Stage ${stageName(book, from, to.pipelineId)} → ${stageName(book, to, from.pipelineId)}`
        : `Placed in ${stageName(book, to)}`;
      return reason ? `${moved} (${reason})` : moved;
    }
    case 'note_changed':
      return 'Pinned note edited';
    case 'note_added': {
      const note = text(data.text);
      return note ? `Note added: "${note.length > 80 ? `${note.slice(0, 79)}…` : note}"` : 'Note added';
    }
    case 'note_deleted':
      return 'A note deleted';
    case 'tag_added':
      return `Tag "${text(data.name) ?? 'a tag'}" added`;
    case 'tag_removed':
      return text(data.name) ? `Tag "${text(data.name)}" removed` : 'A deleted tag removed';
    case 'assigned': {
      const reason = text(data.reason);
      const change = data.to
        ? `Assigned to ${userName(book, data.to)}`
        : `Unassigned (was ${userName(book, data.from)})`;
      return reason ? `${change} (${reason})` : change;
    }
    case 'merged':
      return `Merged ${personOf(record(data.duplicate))} into this lead`;
    default:
      return type.replaceAll('_', ' ');
  }
}

function stepStatus(status: string | undefined): string {
  if (status === 'sent') return 'sent';
  if (status === 'skipped') return 'skipped';
  return status ? `(${status})` : '';
}

function reasonText(reason: string | undefined): string {
  return reason ? reason.replaceAll('_', ' ') : 'no reason given';
}

/** One line for an enrolment the lead holds: its sequence and where it stands. */
export function describeEnrollment(entry: Data): string {
  const name = `"${text(entry.sequenceName) ?? 'A deleted sequence'}"`;
  const stopped = record(entry.stopped);
  if (entry.stopped) return `${name}: stopped (${reasonText(text(stopped.reason))})`;
  const last = record(entry.lastStep);
  if (entry.lastStep) return `${name}: step ${text(last.step)} ${stepStatus(text(last.status))}`;
  return `${name}: enrolled, first step pending`;
}

export function describeNotification(entry: Data): string {
  return `${text(entry.to) ?? 'someone'}: ${text(entry.status) ?? 'unknown'}`;
}

export interface EnrichmentSection {
  title: string;
  rows: Array<[string, string]>;
}

const GEO_SOURCES: Record<string, string> = {
  payload_ip: 'from the IP address the form sent',
  request_ip: 'from the IP address of the request',
  phone: 'from the phone number',
};
const COMPANY_SOURCES: Record<string, string> = {
  payload: 'as given by the lead',
  email_domain: "guessed from the e-mail's domain",
};
const yesNo = (value: unknown) => (value === true ? 'yes' : value === false ? 'no' : 'unknown');

/** The enrichment as sections a person reads: e-mail checks, location, company. */
export function enrichmentSections(enrichment: Data): EnrichmentSection[] {
  const sections: EnrichmentSection[] = [];
  const email = record(enrichment.email);
  if (Object.keys(email).length) {
    const rows: Array<[string, string]> = [];
    if (email.valid === false) {
      const problem = text(email.problem);
      rows.push(['Address', problem ? `not valid (${problem.replaceAll('_', ' ')})` : 'not valid']);
    } else if (email.valid === true) rows.push(['Address', 'valid']);
    const deliverable = text(email.deliverable);
    if (deliverable)
      rows.push([
        'Takes mail',
        deliverable === 'yes'
          ? 'yes (the domain has mail servers)'
          : deliverable === 'no'
            ? 'no (the domain takes no mail)'
            : 'not checked',
      ]);
    if ('freeProvider' in email) rows.push(['Free-mail provider', yesNo(email.freeProvider)]);
    if ('disposable' in email) rows.push(['Disposable address', yesNo(email.disposable)]);
    if ('role' in email) rows.push(['Team address (info@, sales@…)', yesNo(email.role)]);
    sections.push({ title: 'E-mail checks', rows });
  }
  const geo = record(enrichment.geo);
  if (Object.keys(geo).length) {
    const country = text(geo.countryName) ?? text(geo.country);
    const how = GEO_SOURCES[text(geo.source) ?? ''];
    sections.push({
      title: 'Location',
      rows: [['Country', country ? (how ? `${country}, ${how}` : country) : 'unknown']],
    });
  }
  const company = record(enrichment.company);
  if (Object.keys(company).length) {
    const rows: Array<[string, string]> = [];
    const name = text(company.name);
    const how = COMPANY_SOURCES[text(company.source) ?? ''];
    rows.push(['Name', name ? (how ? `${name}, ${how}` : name) : 'unknown']);
    if (text(company.domain)) rows.push(['Website domain', text(company.domain) as string]);
    sections.push({ title: 'Company', rows });
  }
  return sections;
}

function enrichmentSummary(data: Data): string {
  const parts: string[] = [];
  const email = record(data.email);
  if (email.valid === false) parts.push('e-mail not valid');
  else if (email.deliverable === 'yes') parts.push('e-mail takes mail');
  const country = text(record(data.geo).countryName);
  if (country) parts.push(country);
  const company = text(record(data.company).name);
  if (company) parts.push(company);
  return parts.length ? parts.join(', ') : 'nothing found';
}
