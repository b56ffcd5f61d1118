import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorMessage } from '../api/client.js';

/** Loads with `load` now and whenever `deps` change; `reload` for after a change or a stream event. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  // The caller names what the load depends on (`deps`), as with useEffect.
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setLoading(true);
    try {
      const value = await load();
      if (mine !== generation.current) return;
      setData(value);
      setError(undefined);
    } catch (caught) {
      if (mine === generation.current) setError(errorMessage(caught));
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, loading, reload, setData };
}

/** `action` at most once per `intervalMs`: the first call at once, later ones folded into one. */
export function useThrottled(action: () => void, intervalMs: number): () => void {
  const last = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const latest = useRef(action);
  latest.current = action;
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback(() => {
    if (timer.current) return;
    const wait = Math.max(0, last.current + intervalMs - Date.now());
    timer.current = setTimeout(() => {
      timer.current = undefined;
      last.current = Date.now();
      latest.current();
    }, wait);
  }, [intervalMs]);
}

/**
 * Calls `reload` when the user comes back to the page (the window regains focus, or the tab is shown
 * again), at most once per `intervalMs`: what other users or tabs changed meanwhile (a source created
 * elsewhere) shows without a reload of the page and without polling.
 */
export function useReloadOnReturn(reload: () => unknown, intervalMs = 2000): void {
  const throttled = useThrottled(() => void reload(), intervalMs);
  useEffect(() => {
    const onVisible = () => {
      if (document.visibilityState === 'visible') throttled();
    };
    addEventListener('focus', throttled);
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      removeEventListener('focus', throttled);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [throttled]);
}

/** Runs an action, keeping its pending state and error message for the form that started it. */
export function useAction() {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const run = useCallback(async (action: () => Promise<unknown>): Promise<boolean> => {
    setPending(true);
    setError(undefined);
    try {
      await action();
      return true;
    } catch (caught) {
      setError(errorMessage(caught));
      return false;
    } finally {
      setPending(false);
    }
  }, []);
  return { pending, error, run, setError };
}

export function ErrorMessage({ error }: { error: string | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

export function Status({ children }: { children: ComponentChildren }) {
  return (
    <p class="muted" role="status">
      {children}
    </p>
  );
}

/**
 * A side panel on the native <dialog>: focus moves into it and is kept there, Escape closes it, and
 * the page behind is inert for screen readers and the keyboard.
 */
export function Drawer(props: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    // The drawer is removed rather than closed, so the browser does not give focus back to what
    // opened it: done here, when that is still on the page (the row's name, the card).
    const opener = document.activeElement;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class="drawer"
      aria-label={props.title}
      onClose={props.onClose}
      onCancel={(event) => {
        event.preventDefault();
        props.onClose();
      }}
    >
      <header class="drawer-header">
        <h2>{props.title}</h2>
        <button type="button" class="ghost" onClick={props.onClose} aria-label="Close">
          ✕
        </button>
      </header>
      <div class="drawer-body">{props.children}</div>
    </dialog>
  );
}

/**
 * A button that runs `onRun`, then `onDone` (a reload), through `action` (disabled while they run,
 * its error the action's); with `question`, only once the user said yes to it (a change that cannot
 * be undone: a delete, a token or secret rotation).
 */
export function ActionButton(props: {
  action: ReturnType<typeof useAction>;
  onRun: () => Promise<unknown>;
  onDone?: () => unknown;
  question?: string;
  class?: string;
  /** Its accessible name, where the visible text alone does not say which item it acts on. */
  label?: string;
  disabled?: boolean;
  children: ComponentChildren;
}) {
  return (
    <button
      type="button"
      class={props.class}
      aria-label={props.label}
      disabled={props.action.pending || props.disabled}
      onClick={() => {
        if (props.question !== undefined && !confirm(props.question)) return;
        void props.action.run(async () => {
          await props.onRun();
          await props.onDone?.();
        });
      }}
    >
      {props.children}
    </button>
  );
}

/** Copies text to the clipboard and says so (for screen readers too). */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      onClick={async () => {
        await navigator.clipboard?.writeText(text).catch(() => undefined);
        setCopied(true);
        setTimeout(() => setCopied(false), 2000);
      }}
    >
      {copied ? 'Copied' : label}
      <span class="visually-hidden" aria-live="polite">
        {copied ? ' copied to the clipboard' : ''}
      </span>
    </button>
  );
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export function fullName(lead: { firstName: string | null; lastName: string | null }): string {
  return [lead.firstName, lead.lastName].filter(Boolean).join(' ') || '(no name)';
}

/** Label and value pairs, as a description list (a lead's details, an account). */
export function FieldList({ rows }: { rows: ReadonlyArray<readonly [string, ComponentChildren]> }) {
  return (
    <dl class="fields">
      {rows.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The small ✕ that removes one item of a list (a tag, a saved view, a stage); `label` names it. */
export function RemoveButton(props: { label: string; onClick: () => void; disabled?: boolean }) {
  return (
    <button
      type="button"
      class="ghost"
      aria-label={props.label}
      disabled={props.disabled}
      onClick={props.onClick}
    >
      ✕
    </button>
  );
}
