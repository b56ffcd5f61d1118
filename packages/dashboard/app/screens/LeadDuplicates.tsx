import { api, inPath, type LeadDetail, type User, unwrap } from '../api/client.js';
import { TitledSection } from '../components/sections.js';
import { ErrorMessage, formatDate, fullName, useLoad } from '../components/ui.js';
import { MergeToggle, matchReason, useMergePreview } from './MergeReview.js';

/** The leads that duplicate this one, each to merge into it; or, for a duplicate, its original. */
export function Duplicates(props: {
  lead: LeadDetail;
  users: User[];
  onMerged: () => void;
  /** This lead (a duplicate) was merged into its original: it is gone. */
  onMergedAway: () => void;
  onOpenLead: (id: string) => void;
}) {
  const { lead, users, onMerged, onOpenLead } = props;
  const duplicates = useLoad(
    async () => unwrap(await api.GET('/api/leads/{id}/duplicates', inPath({ id: lead.id }))).data,
    [lead.id, lead.updatedAt],
  );
  if (lead.isDuplicate && lead.duplicateOf) {
    return (
      <DuplicateOf
        lead={lead}
        primaryId={lead.duplicateOf}
        users={users}
        onMerged={props.onMergedAway}
        onOpenLead={onOpenLead}
      />
    );
  }
  if (!duplicates.data || duplicates.data.length === 0) return null;
  return (
    <TitledSection id="lead-duplicates" level={3} title="Duplicates">
      <ul class="duplicates">
        {duplicates.data.map((duplicate) => (
          <li key={duplicate.id}>
            <span>
              {fullName(duplicate)} · {duplicate.email ?? '—'} · {formatDate(duplicate.createdAt)}
            </span>
            <MergeToggle
              label="Merge into this lead"
              primaryId={lead.id}
              duplicateId={duplicate.id}
              primaryLabel={fullName(lead)}
              duplicateLabel={fullName(duplicate)}
              users={users}
              onMerged={() => {
                void duplicates.reload();
                onMerged();
              }}
            />
          </li>
        ))}
      </ul>
    </TitledSection>
  );
}

/** A duplicate's drawer: which lead it duplicates and why, and the merge into that lead. */
function DuplicateOf(props: {
  lead: LeadDetail;
  primaryId: string;
  users: User[];
  onMerged: () => void;
  onOpenLead: (id: string) => void;
}) {
  const { lead, primaryId, onOpenLead } = props;
  const primary = useLoad(
    async () => unwrap(await api.GET('/api/leads/{id}', inPath({ id: primaryId }))),
    [primaryId],
  );
  const preview = useMergePreview(primaryId, lead.id, lead.updatedAt);
  const primaryName = primary.data ? fullName(primary.data) : 'an earlier lead';
  return (
    <TitledSection id="lead-duplicates" level={3} title="Duplicate">
      <p class="flagged">
        Flagged as a duplicate of{' '}
        <button type="button" class="link" onClick={() => onOpenLead(primaryId)}>
          {primaryName}
        </button>
        {preview.data ? ` because ${matchReason(preview.data.matchedOn)}.` : '.'}
      </p>
      <ErrorMessage error={primary.error ?? preview.error} />
      {primary.data && (
        <MergeToggle
          label={`Merge into ${primaryName}`}
          primaryId={primaryId}
          duplicateId={lead.id}
          primaryLabel={primaryName}
          duplicateLabel={fullName(lead)}
          users={props.users}
          onMerged={() => {
            props.onMerged();
            onOpenLead(primaryId);
          }}
        />
      )}
    </TitledSection>
  );
}
