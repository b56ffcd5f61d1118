import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api/client.js';
import { session } from './api/session.js';
import { closeStream, useStream, useStreamStatus } from './api/stream.js';
import { Status } from './components/ui.js';
import { Link, useLocation } from './router.js';
import { Account } from './screens/Account.js';
import { ApiKeys } from './screens/ApiKeys.js';
import { Board } from './screens/Board.js';
import { DeadLetters } from './screens/DeadLetters.js';
import { Import } from './screens/Import.js';
import { Leads } from './screens/Leads.js';
import { Overview } from './screens/Overview.js';
import { Pipelines } from './screens/Pipelines.js';
import { Sequences } from './screens/Sequences.js';
import { Settings } from './screens/Settings.js';
import { SignIn } from './screens/SignIn.js';
import { Sources } from './screens/Sources.js';
import { Users } from './screens/Users.js';
import { Webhooks } from './screens/Webhooks.js';

interface Screen {
  path: string;
  label: string;
  adminOnly?: boolean;
  render: () => JSX.Element;
}

const SCREENS: Screen[] = [
  { path: '/', label: 'Leads', render: () => <Leads /> },
  { path: '/board', label: 'Board', render: () => <Board /> },
  { path: '/overview', label: 'Overview', render: () => <Overview /> },
  { path: '/sources', label: 'Sources', render: () => <Sources /> },
  { path: '/import', label: 'Import', render: () => <Import /> },
  { path: '/pipelines', label: 'Pipelines', render: () => <Pipelines /> },
  { path: '/sequences', label: 'Sequences', render: () => <Sequences /> },
  { path: '/settings', label: 'Settings', render: () => <Settings /> },
  { path: '/webhooks', label: 'Webhooks', render: () => <Webhooks /> },
  { path: '/api-keys', label: 'API keys', render: () => <ApiKeys /> },
  { path: '/users', label: 'Users', adminOnly: true, render: () => <Users /> },
  { path: '/dead-letters', label: 'Dead letters', adminOnly: true, render: () => <DeadLetters /> },
];

/** Reached from the user's name in the top bar, not from the menu. */
const ACCOUNT: Screen = { path: '/account', label: 'Your account', render: () => <Account /> };

function useSession() {
  const [, setVersion] = useState(0);
  useEffect(() => session.subscribe(() => setVersion((version) => version + 1)), []);
  return session.user;
}

/** On load: a stored refresh token signs the user back in. */
function useRestoredSession(): boolean {
  const [restoring, setRestoring] = useState(() => session.refreshToken !== undefined);
  useEffect(() => {
    if (!restoring) return;
    void (async () => {
      if (await session.refresh()) {
        const me = await api.GET('/api/auth/me');
        if (me.data) session.setUser(me.data);
      }
      setRestoring(false);
    })();
  }, [restoring]);
  return restoring;
}

function LiveIndicator() {
  // Keeps the one stream open while signed in, whichever screen is shown.
  useStream(() => undefined);
  const status = useStreamStatus();
  const label = { live: 'Live', connecting: 'Connecting…', offline: 'Offline, retrying' }[status];
  return (
    <span class={`live live-${status}`} role="status" title="Live updates">
      {label}
    </span>
  );
}

function Shell({ user }: { user: NonNullable<typeof session.user> }) {
  const { path } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const screens = SCREENS.filter((screen) => !screen.adminOnly || user.role === 'admin');
  const current = [...screens, ACCOUNT].find((screen) => screen.path === path);

  useEffect(() => {
    document.title = current ? `${current.label} · Lead Capture` : 'Lead Capture';
    setMenuOpen(false);
  }, [current]);

  async function signOut() {
    const refreshToken = session.refreshToken;
    closeStream();
    if (refreshToken) await api.POST('/api/auth/logout', { body: { refreshToken } }).catch(() => undefined);
    session.clear();
  }

  return (
    <div class="shell">
      <a class="skip-link" href="#content">
        Skip to content
      </a>
      <header class="top-bar">
        <button
          type="button"
          class="menu-toggle ghost"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <strong class="brand">Lead Capture</strong>
        <LiveIndicator />
        <Link href="/account" class="user" aria-current={path === '/account' ? 'page' : undefined}>
          <span title={`${user.email}: your account and password`}>{user.name}</span>
        </Link>
        <button type="button" class="ghost" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <nav id="main-nav" class={menuOpen ? 'open' : ''} aria-label="Main">
        <ul>
          {screens.map((screen) => (
            <li key={screen.path}>
              <Link href={screen.path} aria-current={screen.path === path ? 'page' : undefined}>
                {screen.label}
              </Link>
            </li>
          ))}
          {/* On a phone the top bar has no room for the user's name: the account is in the menu. */}
          <li class="phone-only">
            <Link href="/account" aria-current={path === '/account' ? 'page' : undefined}>
              {ACCOUNT.label}
            </Link>
          </li>
        </ul>
      </nav>
      <main id="content" tabIndex={-1}>
        {current ? (
          current.render()
        ) : (
          <section>
            <h1>Not found</h1>
            <p>
              There is no page at {path}. <Link href="/">Back to the leads</Link>
            </p>
          </section>
        )}
      </main>
    </div>
  );
}

export function App() {
  const user = useSession();
  const restoring = useRestoredSession();
  if (restoring) return <Status>Signing you in…</Status>;
  return user ? <Shell user={user} /> : <SignIn />;
}
