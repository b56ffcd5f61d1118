/**
 * The signed-in session. The access token lives in memory only; the refresh token in localStorage,
 * so a reload or a second tab stays signed in (the CSP allows no third-party or inline script that
 * could read it). Every refresh rotates the refresh token; one refresh runs at a time, the other
 * callers wait for it (a refresh token works once: two parallel refreshes would revoke the sign-in).
 */
const REFRESH_KEY = 'lead-capture.refreshToken';

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: 'admin' | 'member';
}

type Listener = () => void;

let accessToken: string | undefined;
let user: SessionUser | undefined;
let refreshing: Promise<boolean> | undefined;
const listeners = new Set<Listener>();

function notify(): void {
  for (const listener of listeners) listener();
}

export const session = {
  get accessToken(): string | undefined {
    return accessToken;
  },
  get user(): SessionUser | undefined {
    return user;
  },
  get refreshToken(): string | undefined {
    return localStorage.getItem(REFRESH_KEY) ?? undefined;
  },
  subscribe(listener: Listener): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
  setTokens(tokens: { token: string; refreshToken: string }): void {
    accessToken = tokens.token;
    localStorage.setItem(REFRESH_KEY, tokens.refreshToken);
  },
  setUser(next: SessionUser): void {
    user = next;
    notify();
  },
  clear(): void {
    accessToken = undefined;
    user = undefined;
    localStorage.removeItem(REFRESH_KEY);
    notify();
  },
  /** Exchanges the refresh token for new tokens; false (and signed out) when it is refused. */
  refresh(): Promise<boolean> {
    refreshing ??= (async () => {
      const refreshToken = session.refreshToken;
      if (!refreshToken) return false;
      const response = await fetch('/api/auth/refresh', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refreshToken }),
      }).catch(() => undefined);
      if (!response) return false;
      if (!response.ok) {
        // 429/5xx: keep the refresh token for a later try; 400/401: the sign-in is over.
        if (response.status === 400 || response.status === 401) session.clear();
        return false;
      }
      session.setTokens((await response.json()) as { token: string; refreshToken: string });
      return true;
    })().finally(() => {
      refreshing = undefined;
    });
    return refreshing;
  },
};
