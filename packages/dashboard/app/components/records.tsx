import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { TextField } from './fields.js';
import { EditorForm } from './forms.js';
import { TitledSection } from './sections.js';
import { ErrorMessage, useAction } from './ui.js';

/** A record a screen lists by its name (a pipeline, a sequence). */
interface NamedRecord {
  id: string;
  name: string;
}

/**
 * A screen of named records, one edited at a time under the list: "New <noun>" beside the title;
 * each record's name opens it, `detailOf` follows the name; `empty` stands for an empty list (given
 * what opens a new record). `editor` is the open one's (`key` changes with the record): its `onDone`
 * closes it and reloads the list.
 */
export function RecordList<R extends NamedRecord>(props: {
  titleId: string;
  title: string;
  noun: string;
  records: { data?: R[]; error?: string; reload: () => unknown };
  detailOf: (record: R) => ComponentChildren;
  empty?: (startNew: () => void) => ComponentChildren;
  editor: (edit: { key: string; record: R | undefined; onDone: () => void }) => ComponentChildren;
}) {
  const { records } = props;
  const [editing, setEditing] = useState<string | 'new' | undefined>(undefined);
  const startNew = () => setEditing('new');
  return (
    <TitledSection
      id={props.titleId}
      title={props.title}
      actions={
        <button type="button" onClick={startNew}>
          {`New ${props.noun}`}
        </button>
      }
    >
      <ErrorMessage error={records.error} />
      {records.data?.length === 0 && editing !== 'new' && props.empty?.(startNew)}
      <ul>
        {(records.data ?? []).map((record) => (
          <li key={record.id}>
            <button type="button" class="link" onClick={() => setEditing(record.id)}>
              {record.name}
            </button>
            {props.detailOf(record)}
          </li>
        ))}
      </ul>
      {editing &&
        props.editor({
          key: editing,
          record: records.data?.find((record) => record.id === editing),
          onDone: () => {
            setEditing(undefined);
            void records.reload();
          },
        })}
    </TitledSection>
  );
}

/** The calls that keep a screen's records, each body `B` (the API's create, update and delete). */
export interface RecordCalls<B> {
  create: (body: B) => Promise<unknown>;
  update: (id: string, body: B) => Promise<unknown>;
  remove: (id: string) => Promise<unknown>;
}

/**
 * The editor of a record a screen lists by name (a pipeline, a sequence): "New <noun>" or "Edit
 * <name>", its Name field first. Save sends `body()` (a create, or an update of `record`); Delete,
 * asked first with `removeQuestion` of the saved name, shows where the record exists and may be
 * deleted. Either ends the editing (`onDone`), as Cancel does.
 */
export function RecordEditor<B>(props: {
  noun: string;
  calls: RecordCalls<B>;
  record: NamedRecord | undefined;
  name: string;
  onName: (name: string) => void;
  body: () => B;
  removeQuestion: (name: string) => string;
  /** False where the record must stay (the default pipeline). */
  removable?: boolean;
  onDone: () => void;
  children: ComponentChildren;
}) {
  const action = useAction();
  const { calls, record } = props;
  return (
    <EditorForm
      title={record ? `Edit ${record.name}` : `New ${props.noun}`}
      action={action}
      onSubmit={() => (record ? calls.update(record.id, props.body()) : calls.create(props.body()))}
      submitLabel={`Save ${props.noun}`}
      onCancel={props.onDone}
      onDone={props.onDone}
      remove={
        record &&
        props.removable !== false && {
          label: `Delete ${props.noun}`,
          question: props.removeQuestion(record.name),
          run: () => calls.remove(record.id),
        }
      }
    >
      <TextField label="Name" required value={props.name} onValue={props.onName} />
      {props.children}
    </EditorForm>
  );
}
