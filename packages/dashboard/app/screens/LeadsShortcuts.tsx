import { useEffect, useRef } from 'preact/hooks';

export interface ListShortcuts {
  next: () => void;
  previous: () => void;
  open: () => void;
  toggle: () => void;
  assign: () => void;
  search: () => void;
  help: () => void;
}

/** The keys of the leads list, as the shortcuts dialog lists them. */
export const SHORTCUTS: ReadonlyArray<[keys: string[], what: string, action: keyof ListShortcuts]> = [
  [['j'], 'Next lead', 'next'],
  [['k'], 'Previous lead', 'previous'],
  [['Enter', 'o'], 'Open the lead', 'open'],
  [['x'], 'Select or unselect the lead', 'toggle'],
  [['a'], 'Assign the selected leads (or this one)', 'assign'],
  [['/'], 'Search', 'search'],
  [['?'], 'Show these shortcuts', 'help'],
];

/** Typing in a field, or a dialog (the drawer) open: keys are the field's or the dialog's. */
function keysBelongElsewhere(event: KeyboardEvent): boolean {
  if (event.ctrlKey || event.metaKey || event.altKey) return true;
  if (document.querySelector('dialog[open]')) return true;
  const target = event.target as HTMLElement | null;
  if (!target) return false;
  if (target.isContentEditable || target.tagName === 'TEXTAREA' || target.tagName === 'SELECT') return true;
  return target.tagName === 'INPUT' && !['checkbox', 'radio'].includes((target as HTMLInputElement).type);
}

/**
 * Gmail-style keys on the leads list. Enter on a focused row's name is the button's own click, so
 * it is handled here only when focus is elsewhere (j/k focus the row's name button).
 */
export function useListShortcuts(handlers: ListShortcuts): void {
  const latest = useRef(handlers);
  latest.current = handlers;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (keysBelongElsewhere(event)) return;
      const target = event.target as HTMLElement | null;
      if (event.key === 'Enter' && target?.tagName === 'BUTTON') return;
      const match = SHORTCUTS.find(([keys]) => keys.includes(event.key));
      if (!match) return;
      event.preventDefault();
      latest.current[match[2]]();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
}

export function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (ref.current && !ref.current.open) ref.current.showModal();
  }, []);
  return (
    <dialog ref={ref} class="shortcuts" aria-labelledby="shortcuts-title" onClose={onClose}>
      <h2 id="shortcuts-title">Keyboard shortcuts</h2>
      <dl>
        {SHORTCUTS.map(([keys, what]) => (
          <div key={what}>
            <dt>
              {keys.map((key, index) => (
                <span key={key}>
                  {index > 0 && ' or '}
                  <kbd>{key}</kbd>
                </span>
              ))}
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <form method="dialog">
        <button type="submit">Close</button>
      </form>
    </dialog>
  );
}
