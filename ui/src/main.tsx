/**
 * The rayshift dashboard: who the viewer is (their own token, entered once and kept for the tab),
 * and the page of the current hash route.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, tokenStore, whoAmI, type WhoAmIResponseJson } from './api';
import { ListPage } from './pages/ListPage';
import { RbgPage } from './pages/RbgPage';
import { RolloutPage } from './pages/RolloutPage';
import { useRoute } from './hash-location';
import './styles.css';

type Identity = { state: 'checking' } | { state: 'signed-in'; who: WhoAmIResponseJson } | { state: 'needs-token'; error?: string };

function TokenForm({ error, onSaved }: { error?: string; onSaved: () => void }) {
  const [token, setToken] = useState('');
  return (
    <form
      class="token-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (!token.trim()) return;
        tokenStore.set(token);
        onSaved();
      }}
    >
      <h1>Sign in</h1>
      <p>
        Paste a bearer token for audience <code>rayshift</code>, e.g. from <code>kubectl create token &lt;service-account&gt; --audience=rayshift</code>. It is
        kept for this browser tab only.
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <label for="token">API token</label>
      <input id="token" type="password" autocomplete="off" value={token} onInput={(e) => setToken((e.target as HTMLInputElement).value)} required />
      <button type="submit">Sign in</button>
    </form>
  );
}

function App() {
  const route = useRoute();
  const [identity, setIdentity] = useState<Identity>({ state: 'checking' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let stale = false;
    const retry = () => {
      const t = setTimeout(() => setAttempt((n) => n + 1), 2_000);
      return () => clearTimeout(t);
    };
    whoAmI().then(
      (who) => !stale && setIdentity({ state: 'signed-in', who }),
      (e: unknown) => {
        if (stale) return;
        if (e instanceof ApiError && e.httpStatus === 401) {
          setIdentity({ state: 'needs-token', error: tokenStore.get() ? 'The token was not accepted.' : undefined });
          return;
        }
        setIdentity({ state: 'needs-token', error: `The API server did not answer (${e instanceof ApiError ? e.message : 'error'}); retrying…` });
        retry();
      },
    );
    return () => {
      stale = true;
    };
  }, [attempt]);

  useEffect(() => {
    document.title = route.page === 'list' ? 'Rollouts · rayshift' : `${route.name} · rayshift`;
    document.getElementById('main')?.focus();
  }, [route]);

  // With a stored token, the page loads while whoami is asked (a refused token shows the form).
  const optimistic = identity.state === 'checking' && tokenStore.get() !== undefined;

  const signOut = () => {
    tokenStore.clear();
    setIdentity({ state: 'needs-token' });
  };

  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="#/">
          rayshift
        </a>
        <nav aria-label="Main">
          <a href="#/">Rollouts</a>
        </nav>
        {identity.state === 'signed-in' && (
          <p class="who">
            Signed in as <strong data-testid="username">{identity.who.username || 'local'}</strong>{' '}
            {tokenStore.get() && (
              <button type="button" class="link" onClick={signOut}>
                Forget token
              </button>
            )}
          </p>
        )}
      </header>
      {identity.state === 'checking' && !optimistic && (
        <main id="main" tabIndex={-1}>
          <p class="muted">Connecting…</p>
        </main>
      )}
      {identity.state === 'needs-token' && (
        <main id="main" tabIndex={-1}>
          <TokenForm error={identity.error} onSaved={() => setAttempt((n) => n + 1)} />
        </main>
      )}
      {(identity.state === 'signed-in' || optimistic) &&
        (route.page === 'rayservice' ? (
          <RolloutPage key={`${route.namespace}/${route.name}`} namespace={route.namespace} name={route.name} />
        ) : route.page === 'rolebasedgroup' ? (
          <RbgPage key={`${route.namespace}/${route.name}`} namespace={route.namespace} name={route.name} />
        ) : (
          <ListPage />
        ))}
    </>
  );
}

render(<App />, document.getElementById('app')!);
