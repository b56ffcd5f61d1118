import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/**
 * Client routes on the History API: real paths (the gateway answers index.html for each), so a
 * link can be opened in a new tab or bookmarked with its filters in the query string.
 */
const NAVIGATE = 'dashboard:navigate';

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  dispatchEvent(new Event(NAVIGATE));
}

/** The current path and query; re-renders on every navigation (links, back, forward). */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setVersion] = useState(0);
  useEffect(() => {
    const update = () => setVersion((version) => version + 1);
    addEventListener('popstate', update);
    addEventListener(NAVIGATE, update);
    return () => {
      removeEventListener('popstate', update);
      removeEventListener(NAVIGATE, update);
    };
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/** Replaces the query string (keeps the path), for filters and pages. */
export function setQuery(query: URLSearchParams, options: { replace?: boolean } = {}): void {
  const search = query.toString();
  navigate(`${location.pathname}${search ? `?${search}` : ''}`, options);
}

/** Sets the given query parameters on the current query string (undefined or '' removes one). */
export function updateQuery(
  changes: Record<string, string | undefined>,
  options: { replace?: boolean } = {},
): void {
  const next = new URLSearchParams(location.search);
  for (const [key, value] of Object.entries(changes)) {
    if (value) next.set(key, value);
    else next.delete(key);
  }
  setQuery(next, options);
}

export function Link(props: {
  href: string;
  children: ComponentChildren;
  class?: string;
  'aria-current'?: 'page' | undefined;
}) {
  const { href, children, ...rest } = props;
  return (
    <a
      {...rest}
      href={href}
      onClick={(event) => {
        if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey)
          return;
        event.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}
