import type { ComponentChildren } from 'preact';

/** One <option> a value, the value its own label (a select's list of statuses, qualifications...). */
export function ValueOptions({ values }: { values: readonly (string | number)[] }) {
  return (
    <>
      {values.map((value) => (
        <option key={String(value)} value={String(value)}>
          {value}
        </option>
      ))}
    </>
  );
}

/** One <option> an item, by its id and under its name (sources, users, pipelines, stages). */
export function NamedOptions({ items }: { items: readonly { id: string; name: string }[] }) {
  return (
    <>
      {items.map((item) => (
        <option key={item.id} value={item.id}>
          {item.name}
        </option>
      ))}
    </>
  );
}

/** What the text fields of the screens set on their input besides its value. */
interface InputProps {
  type?: 'text' | 'email' | 'password' | 'url' | 'search' | 'date' | 'number';
  name?: string;
  required?: boolean;
  minLength?: number;
  maxLength?: number;
  min?: number;
  max?: number;
  placeholder?: string;
  autoComplete?: string;
  disabled?: boolean;
  'aria-invalid'?: boolean;
  'aria-describedby'?: string;
}

/** A labelled input whose value the caller holds (text unless `type` says otherwise). */
export function TextField(
  props: InputProps & {
    label: ComponentChildren;
    value: string;
    onValue: (value: string) => void;
  },
) {
  const { label, value, onValue, type = 'text', ...input } = props;
  return (
    <label>
      {label}
      {/* Preact types each input type apart; these all take a string value. */}
      <input
        {...input}
        type={type as 'text'}
        value={value}
        onInput={(event) => onValue(event.currentTarget.value)}
      />
    </label>
  );
}

/** A labelled select whose value the caller holds; its options are the children. */
export function SelectField(props: {
  label: ComponentChildren;
  value: string;
  onValue: (value: string) => void;
  name?: string;
  disabled?: boolean;
  children: ComponentChildren;
}) {
  return (
    <label>
      {props.label}
      <select
        name={props.name}
        value={props.value}
        disabled={props.disabled}
        onChange={(event) => props.onValue(event.currentTarget.value)}
      >
        {props.children}
      </select>
    </label>
  );
}

/** A checkbox with its label after it. */
export function CheckField(props: {
  label: ComponentChildren;
  checked: boolean;
  onChange: (checked: boolean) => void;
  disabled?: boolean;
}) {
  return (
    <label class="check">
      <input
        type="checkbox"
        checked={props.checked}
        disabled={props.disabled}
        onChange={(event) => props.onChange(event.currentTarget.checked)}
      />
      {props.label}
    </label>
  );
}

/** `list` with `value` in it (at the end) or out of it. */
export function toggled<T>(list: readonly T[], value: T, on: boolean): T[] {
  return on ? [...list.filter((item) => item !== value), value] : list.filter((item) => item !== value);
}

/**
 * A checkbox a choice, ticked when `selected` holds it; `all` ticks and locks every one (a
 * subscription to every event type).
 */
export function CheckList<T extends string>(props: {
  choices: readonly (T | { id: T; name: string })[];
  selected: readonly T[];
  onChange: (selected: T[]) => void;
  all?: boolean;
}) {
  return (
    <>
      {props.choices.map((choice) => {
        const [value, label] = typeof choice === 'string' ? [choice, choice] : [choice.id, choice.name];
        return (
          <label class="check" key={value}>
            <input
              type="checkbox"
              disabled={props.all}
              checked={props.all || props.selected.includes(value)}
              onChange={(event) =>
                props.onChange(toggled(props.selected, value, event.currentTarget.checked))
              }
            />
            {label}
          </label>
        );
      })}
    </>
  );
}

/** A From and a To date, each applied as soon as it is picked (a list's date filter). */
export function DateRangeFields(props: {
  from: string;
  to: string;
  onFrom: (from: string) => void;
  onTo: (to: string) => void;
}) {
  return (
    <>
      <label>
        From
        <input type="date" value={props.from} onChange={(event) => props.onFrom(event.currentTarget.value)} />
      </label>
      <label>
        To
        <input type="date" value={props.to} onChange={(event) => props.onTo(event.currentTarget.value)} />
      </label>
    </>
  );
}
