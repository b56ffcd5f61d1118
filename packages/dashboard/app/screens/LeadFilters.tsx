import { useState } from 'preact/hooks';
import { QUALIFICATIONS, type Source, STATUSES, type User } from '../api/client.js';
import { FILTER_KEYS } from '../api/filters.js';
import { DateRangeFields, NamedOptions, SelectField, ValueOptions } from '../components/fields.js';

/** The leads list's filters, read from and written to the URL's query (`onChange`). */
export function LeadFilters(props: {
  query: URLSearchParams;
  sources: Array<Pick<Source, 'id' | 'name'>>;
  users: User[];
  onChange: (changes: Record<string, string | undefined>) => void;
}) {
  const { query, sources, users, onChange } = props;
  const [search, setSearch] = useState(query.get('search') ?? '');
  const [tag, setTag] = useState(query.get('tag') ?? '');
  const active = FILTER_KEYS.some((key) => query.get(key));

  return (
    <form
      class="filters"
      aria-label="Filters"
      onSubmit={(event) => {
        event.preventDefault();
        onChange({ search: search.trim() || undefined, tag: tag.trim() || undefined });
      }}
    >
      <label>
        Search
        <input
          type="search"
          name="search"
          placeholder="Name, e-mail, phone, company"
          value={search}
          maxLength={200}
          onInput={(event) => setSearch(event.currentTarget.value)}
          onBlur={() => onChange({ search: search.trim() || undefined })}
        />
      </label>
      <SelectField
        label="Status"
        value={query.get('status') ?? ''}
        onValue={(status) => onChange({ status })}
      >
        <option value="">Any</option>
        <ValueOptions values={STATUSES} />
      </SelectField>
      <SelectField
        label="Qualification"
        value={query.get('qualification') ?? ''}
        onValue={(qualification) => onChange({ qualification })}
      >
        <option value="">Any</option>
        <ValueOptions values={QUALIFICATIONS} />
      </SelectField>
      <SelectField
        label="Source"
        value={query.get('sourceId') ?? ''}
        onValue={(sourceId) => onChange({ sourceId })}
      >
        <option value="">Any</option>
        <NamedOptions items={sources} />
      </SelectField>
      <SelectField
        label="Assignee"
        value={query.get('assignedTo') ?? ''}
        onValue={(assignedTo) => onChange({ assignedTo })}
      >
        <option value="">Anyone</option>
        <option value="unassigned">Unassigned</option>
        <NamedOptions items={users} />
      </SelectField>
      <label>
        Tag
        <input
          type="text"
          name="tag"
          value={tag}
          maxLength={100}
          onInput={(event) => setTag(event.currentTarget.value)}
          onBlur={() => onChange({ tag: tag.trim() || undefined })}
        />
      </label>
      <SelectField
        label="Duplicates"
        value={query.get('duplicates') ?? ''}
        onValue={(duplicates) => onChange({ duplicates })}
      >
        <option value="">Shown</option>
        <option value="exclude">Hidden</option>
        <option value="only">Only duplicates</option>
      </SelectField>
      <DateRangeFields
        from={query.get('startDate') ?? ''}
        to={query.get('endDate') ?? ''}
        onFrom={(startDate) => onChange({ startDate })}
        onTo={(endDate) => onChange({ endDate })}
      />
      <div class="filter-actions">
        <button type="submit">Apply</button>
        {active && (
          <button
            type="button"
            class="ghost"
            onClick={() => {
              setSearch('');
              setTag('');
              onChange(Object.fromEntries(FILTER_KEYS.map((key) => [key, undefined])));
            }}
          >
            Clear filters
          </button>
        )}
      </div>
    </form>
  );
}
