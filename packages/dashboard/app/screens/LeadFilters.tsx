import { useState } from 'preact/hooks';
import { QUALIFICATIONS, type Source, STATUSES, type User } from '../api/client.js';
import { FILTER_KEYS } from '../api/filters.js';
import { DateRangeFields, SelectField, TextField } from '../components/fields.js';
import { Form } from '../components/forms.js';

type FilterKey = (typeof FILTER_KEYS)[number];

const DUPLICATES_CHOICES = [
  { id: 'exclude', name: 'Hidden' },
  { id: 'only', name: 'Only duplicates' },
];

/** The leads list's filters, read from and written to the URL's query (`onChange`). */
export function LeadFilters(props: {
  query: URLSearchParams;
  sources: Array<Pick<Source, 'id' | 'name'>>;
  users: User[];
  onChange: (changes: Record<string, string | undefined>) => void;
}) {
  const { query, sources, users, onChange } = props;
  // What is typed is applied when the field is left or the form submitted, not at each key.
  const [typed, setTyped] = useState({ search: query.get('search') ?? '', tag: query.get('tag') ?? '' });
  const active = FILTER_KEYS.some((key) => query.get(key));
  const applyTyped = (key: keyof typeof typed) => ({ [key]: typed[key].trim() || undefined });
  const typedField = (key: keyof typeof typed) => ({
    name: key,
    value: typed[key],
    onValue: (value: string) => setTyped({ ...typed, [key]: value }),
    onBlur: () => onChange(applyTyped(key)),
  });
  const picked = (key: FilterKey) => ({
    value: query.get(key) ?? '',
    onValue: (value: string) => onChange({ [key]: value }),
  });

  return (
    <Form
      class="filters"
      aria-label="Filters"
      onSubmit={() => onChange({ ...applyTyped('search'), ...applyTyped('tag') })}
    >
      <TextField
        label="Search"
        type="search"
        placeholder="Name, e-mail, phone, company"
        maxLength={200}
        {...typedField('search')}
      />
      <SelectField label="Status" none="Any" choices={STATUSES} {...picked('status')} />
      <SelectField label="Qualification" none="Any" choices={QUALIFICATIONS} {...picked('qualification')} />
      <SelectField label="Source" none="Any" choices={sources} {...picked('sourceId')} />
      <SelectField
        label="Assignee"
        none="Anyone"
        choices={[{ id: 'unassigned', name: 'Unassigned' }, ...users]}
        {...picked('assignedTo')}
      />
      <TextField label="Tag" maxLength={100} {...typedField('tag')} />
      <SelectField label="Duplicates" none="Shown" choices={DUPLICATES_CHOICES} {...picked('duplicates')} />
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
              setTyped({ search: '', tag: '' });
              onChange(Object.fromEntries(FILTER_KEYS.map((key) => [key, undefined])));
            }}
          >
            Clear filters
          </button>
        )}
      </div>
    </Form>
  );
}
