import type { LeadScored } from '@lead-capture/contracts';

export interface NotificationContent {
  subject: string;
  text: string;
  html: string;
}

const NOT_GIVEN = 'not given';

const QUALIFICATION_LABEL = { hot: 'Hot', warm: 'Warm', cold: 'Cold' } as const;

/** The dashboard page of a lead, or null when PUBLIC_BASE_URL is not configured. */
export function leadLink(leadId: string, publicBaseUrl: string | undefined): string | null {
  if (!publicBaseUrl) return null;
  return `${publicBaseUrl.replace(/\/+$/, '')}/leads/${encodeURIComponent(leadId)}`;
}

function displayName(lead: LeadScored['lead']): string {
  const name = [lead.firstName, lead.lastName]
    .map((part) => part?.trim())
    .filter(Boolean)
    .join(' ');
  return name || lead.email || 'Unnamed lead';
}

function escapeHtml(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

function signed(points: number): string {
  return points > 0 ? `+${points}` : String(points);
}

/**
 * The team's e-mail about one scored lead: who it is, how to reach them, the score with its
 * reasons, the source, and a link to the lead in the dashboard. Without PUBLIC_BASE_URL there is no
 * host to link to, so the mail gives the lead's id and says why the link is missing instead of
 * guessing one. Lead values are escaped in the HTML part; the subject is kept on one line.
 */
export function renderNotificationMail(
  scored: Pick<LeadScored, 'leadId' | 'lead' | 'score' | 'qualification' | 'reasons'>,
  publicBaseUrl: string | undefined,
): NotificationContent {
  const { leadId, lead, score, qualification, reasons } = scored;
  const name = displayName(lead);
  const label = QUALIFICATION_LABEL[qualification];
  const subject = `${label} lead: ${name}${lead.company ? ` (${lead.company})` : ''}, score ${score}`.replace(
    /[\r\n]+/g,
    ' ',
  );
  const link = leadLink(leadId, publicBaseUrl);

  const facts: Array<[string, string]> = [
    ['Name', name],
    ['Company', lead.company || NOT_GIVEN],
    ['E-mail', lead.email || NOT_GIVEN],
    ['Phone', lead.phone || NOT_GIVEN],
    ['Score', `${score} / 100 (${qualification})`],
    ['Source', lead.sourceName || lead.sourceId],
  ];
  const width = Math.max(...facts.map(([key]) => key.length)) + 3;
  const reasonLines = reasons.length
    ? reasons.map(({ points, label: why }) => `  ${signed(points).padStart(4)}  ${why}`)
    : ['  (no reasons given)'];
  const linkLine = link
    ? `Open the lead: ${link}`
    : `Lead id: ${leadId}. Find it on the Leads page of the dashboard (no direct link: PUBLIC_BASE_URL is not configured).`;

  const text = [
    `A new ${qualification} lead scored ${score} / 100.`,
    '',
    ...facts.map(([key, value]) => `${`${key}:`.padEnd(width)}${value}`),
    '',
    'Why this score:',
    ...reasonLines,
    '',
    linkLine,
    '',
  ].join('\n');

  const htmlRows = facts
    .map(([key, value]) => `<tr><th align="left">${escapeHtml(key)}</th><td>${escapeHtml(value)}</td></tr>`)
    .join('');
  const htmlReasons = reasons.length
    ? `<ul>${reasons.map(({ points, label: why }) => `<li>${escapeHtml(`${signed(points)} ${why}`)}</li>`).join('')}</ul>`
    : '<p>(no reasons given)</p>';
  const htmlLink = link
    ? `<p><a href="${escapeHtml(link)}">Open the lead</a></p>`
    : `<p>Lead id: ${escapeHtml(leadId)}. Find it on the Leads page of the dashboard (no direct link: PUBLIC_BASE_URL is not configured).</p>`;
  const html = [
    `<p>A new ${escapeHtml(qualification)} lead scored <b>${score} / 100</b>.</p>`,
    `<table>${htmlRows}</table>`,
    '<p>Why this score:</p>',
    htmlReasons,
    htmlLink,
  ].join('\n');

  return { subject, text, html };
}
