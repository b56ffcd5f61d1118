import type { ComponentChildren } from 'preact';

/**
 * A section named by its heading (`aria-labelledby` the heading's `id`): a screen's (h1, the
 * default), or a part's. `actions` (buttons) stand beside the heading in a toolbar; `busy` while
 * what it shows is loading.
 */
export function TitledSection(props: {
  id: string;
  title: ComponentChildren;
  level?: 1 | 2 | 3;
  actions?: ComponentChildren;
  class?: string;
  busy?: boolean;
  children?: ComponentChildren;
}) {
  const Heading = `h${props.level ?? 1}` as 'h1';
  const heading = <Heading id={props.id}>{props.title}</Heading>;
  return (
    <section aria-labelledby={props.id} class={props.class} aria-busy={props.busy}>
      {props.actions !== undefined ? (
        <div class="toolbar">
          {heading}
          {props.actions}
        </div>
      ) : (
        heading
      )}
      {props.children}
    </section>
  );
}
