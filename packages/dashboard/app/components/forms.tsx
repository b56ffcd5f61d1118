import type { ComponentChildren, JSX } from 'preact';
import { ActionButton, CopyButton, ErrorMessage, type useAction } from './ui.js';

type Action = ReturnType<typeof useAction>;

/**
 * A <form> whose submit stays on the page: `onSubmit` runs instead of the browser's navigation
 * (none: the fields apply as they change).
 */
export function Form(props: Omit<JSX.IntrinsicElements['form'], 'onSubmit'> & { onSubmit?: () => void }) {
  const { onSubmit, ...form } = props;
  return (
    <form
      {...form}
      onSubmit={(event) => {
        event.preventDefault();
        onSubmit?.();
      }}
    />
  );
}

/**
 * The end of an editor: the action's error, then its submit button (disabled while it runs),
 * Cancel when the editor can be left, and any further buttons (a delete).
 */
export function FormActions(props: {
  action: Action;
  /** The error said here, when the form says some next to their field (the action's otherwise). */
  error?: string;
  submitLabel: ComponentChildren;
  submitDisabled?: boolean;
  onCancel?: () => void;
  children?: ComponentChildren;
}) {
  return (
    <>
      <ErrorMessage error={'error' in props ? props.error : props.action.error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={props.action.pending || props.submitDisabled}>
          {props.submitLabel}
        </button>
        {props.onCancel && (
          <button type="button" class="ghost" onClick={props.onCancel}>
            Cancel
          </button>
        )}
        {props.children}
      </div>
    </>
  );
}

/**
 * An editor form (create or edit) under its title: submitting runs `onSubmit` through `action`
 * (pending state, error message), then the fields, then `FormActions`. With `titleId` the form is
 * labelled by its heading, otherwise by the same words as its label.
 */
export function EditorForm(props: {
  title: string;
  titleId?: string;
  action: Action;
  /** The error said at the form's end, when some are said next to their field. */
  error?: string;
  onSubmit: () => Promise<unknown>;
  submitLabel: ComponentChildren;
  submitDisabled?: boolean;
  onCancel?: () => void;
  /** After a save or a delete went through (the editor closes). */
  onDone?: () => void;
  /** A delete of what the form edits, asked first, after Save and Cancel. */
  remove?: { label: string; question: string; run: () => Promise<unknown> } | false;
  children: ComponentChildren;
}) {
  const { remove } = props;
  return (
    <Form
      class="editor"
      aria-label={props.titleId ? undefined : props.title}
      aria-labelledby={props.titleId}
      onSubmit={() =>
        void props.action.run(async () => {
          await props.onSubmit();
          props.onDone?.();
        })
      }
    >
      <h2 id={props.titleId}>{props.title}</h2>
      {props.children}
      <FormActions
        action={props.action}
        {...('error' in props ? { error: props.error } : {})}
        submitLabel={props.submitLabel}
        submitDisabled={props.submitDisabled}
        onCancel={props.onCancel}
      >
        {remove && (
          <ActionButton
            class="danger"
            question={remove.question}
            action={props.action}
            onRun={async () => {
              await remove.run();
              props.onDone?.();
            }}
          >
            {remove.label}
          </ActionButton>
        )}
      </FormActions>
    </Form>
  );
}

/**
 * A one-line form (create a key, a source, a user, a tag): submitting runs `onSubmit` through
 * `action` (its button disabled meanwhile); the action's error is the caller's to show.
 */
export function InlineForm(props: {
  action: Action;
  onSubmit: () => Promise<unknown>;
  submitLabel: ComponentChildren;
  submitDisabled?: boolean;
  /** A primary button unless the form is a minor one. */
  minor?: boolean;
  children: ComponentChildren;
}) {
  return (
    <Form class="inline" onSubmit={() => void props.action.run(props.onSubmit)}>
      {props.children}
      <button
        type="submit"
        class={props.minor ? undefined : 'primary'}
        disabled={props.action.pending || props.submitDisabled}
      >
        {props.submitLabel}
      </button>
    </Form>
  );
}

/** A secret shown once (a new API key, a signing secret): the note, the value to copy, and Done. */
export function ShownOnce(props: {
  note: string;
  value: string;
  valueLabel: string;
  copyLabel: string;
  onDone: () => void;
}) {
  return (
    <div class="notice" role="alert">
      <p>{props.note}</p>
      <input type="text" readOnly class="mono" value={props.value} aria-label={props.valueLabel} />
      <CopyButton text={props.value} label={props.copyLabel} />
      <button type="button" class="ghost" onClick={props.onDone}>
        Done
      </button>
    </div>
  );
}
