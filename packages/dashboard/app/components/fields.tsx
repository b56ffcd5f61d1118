import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/** What a list offers: a value that is its own label (a status), or an item under its name (a user). */
export type Choice = string | number | { id: string; name: string };

function choiceOf(choice: Choice): { value: string; label: string } {
  return typeof choice === 'object'
    ? { value: choice.id, label: choice.name }
    : { value: String(choice), label: String(choice) };
}

/** One <option> a choice (a select's statuses, sources, users, stages...). */
export function Options({ choices }: { choices: readonly Choice[] }) {
  return (
    <>
      {choices.map((choice) => {
        const { value, label } = choiceOf(choice);
        return (
          <option key={value} value={value}>
            {label}
          </option>
        );
      })}
    </>
  );
}

/**
 * A form's text values, held together: `field(name)` gives a TextField or SelectField its value and
 * onValue; `reset` empties the form (back to `initial`).
 */
export function useFields<T extends Record<string, string>>(initial: T) {
  const [values, setValues] = useState(initial);
  return {
    values,
    reset: () => setValues(initial),
    field: (name: keyof T & string) => ({
      value: values[name],
      onValue: (value: string) => setValues({ ...values, [name]: value }),
    }),
  };
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
  onBlur?: () => void;
  'aria-invalid'?: boolean;
  'aria-describedby'?: string;
}

/**
 * What is wrong with a field's value, said under it: the field is marked invalid, and described by
 * the words when they have an id.
 */
interface ProblemProps {
  problem?: string;
  problemId?: string;
}

function invalidWhen({ problem, problemId }: ProblemProps) {
  return { 'aria-invalid': problem ? true : undefined, 'aria-describedby': problem ? problemId : undefined };
}

function ProblemText({ problem, problemId }: ProblemProps) {
  return problem ? (
    <span id={problemId} class="field-error">
      {problem}
    </span>
  ) : null;
}

/** A labelled input whose value the caller holds (text unless `type` says otherwise). */
export function TextField(
  props: InputProps &
    ProblemProps & {
      label: ComponentChildren;
      value: string;
      onValue: (value: string) => void;
    },
) {
  const { label, value, onValue, type = 'text', problem, problemId, ...input } = props;
  return (
    <label>
      {label}
      {/* Preact types each input type apart; these all take a string value. */}
      <input
        {...invalidWhen({ problem, problemId })}
        {...input}
        type={type as 'text'}
        value={value}
        onInput={(event) => onValue(event.currentTarget.value)}
      />
      <ProblemText problem={problem} problemId={problemId} />
    </label>
  );
}

/** A labelled textarea whose value the caller holds. */
export function TextAreaField(
  props: ProblemProps & {
    label: ComponentChildren;
    value: string;
    onValue: (value: string) => void;
    rows: number;
    required?: boolean;
  },
) {
  const { label, value, onValue, problem, problemId, ...textarea } = props;
  return (
    <label>
      {label}
      <textarea
        {...textarea}
        {...invalidWhen({ problem, problemId })}
        value={value}
        onInput={(event) => onValue(event.currentTarget.value)}
      />
      <ProblemText problem={problem} problemId={problemId} />
    </label>
  );
}

/**
 * A labelled select whose value the caller holds. Its options: `none` (the empty value, what no
 * choice means: "Any"), then `choices`, then the children.
 */
export function SelectField(props: {
  label: ComponentChildren;
  value: string;
  onValue: (value: string) => void;
  name?: string;
  disabled?: boolean;
  none?: string;
  choices?: readonly Choice[];
  children?: ComponentChildren;
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
        {props.none !== undefined && <option value="">{props.none}</option>}
        {props.choices && <Options choices={props.choices} />}
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

/**
 * The edits of a list a draft holds (a pipeline's stages, a sequence's steps): each hands `onList`
 * the list it makes.
 */
export function listEdits<T>(list: readonly T[], onList: (list: T[]) => void) {
  return {
    change: (index: number, changes: Partial<T>) =>
      onList(list.map((item, i) => (i === index ? { ...item, ...changes } : item))),
    remove: (index: number) => onList(list.filter((_, i) => i !== index)),
    add: (item: T) => onList([...list, item]),
    move: (index: number, by: number) => {
      const moved = [...list];
      const [item] = moved.splice(index, 1);
      if (item) moved.splice(index + by, 0, item);
      onList(moved);
    },
  };
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
        const { value, label } = choiceOf(choice) as { value: T; label: string };
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
