import { Link } from '../router.js';

/** What a new user sees where leads would be: how the first one gets in. */
export function NoLeadsYet() {
  return (
    <div class="empty-state" data-empty="leads">
      <p>
        <strong>No leads yet.</strong> Leads arrive when a web form or another tool sends them to a source's
        webhook URL, or when you import a CSV file.
      </p>
      <p>
        <Link href="/sources">Create a source</Link> and send a test lead to its webhook URL, or{' '}
        <Link href="/import">import a CSV file</Link>.
      </p>
    </div>
  );
}
