/**
 * The gateway's GraphQL explorer (GET /graphql in a browser, when GATEWAY_EXPLORER is on):
 * GraphiQL with a bearer-token field. Bundled with React, Monaco and the page's CSS by
 * tools/web-assets/build.ts; the page loads nothing from elsewhere (see ../explorer.ts for its CSP).
 */
import { createElement as h, StrictMode, useMemo, useState, type FormEvent } from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import 'graphiql/style.css';
import './explorer.css';

type Fetcher = NonNullable<Parameters<typeof GraphiQL>[0]['fetcher']>;

const root = document.getElementById('explorer')!;
const endpoint = root.dataset['endpoint'] ?? '/graphql';
const assets = root.dataset['assets'] ?? '/graphql/explorer';

// Monaco's workers, built beside the page's script and served by the gateway (never a CDN or a blob).
(globalThis as { MonacoEnvironment?: unknown }).MonacoEnvironment = {
  getWorker(_id: string, label: string) {
    const name = label === 'json' ? 'json' : label === 'graphql' ? 'graphql' : 'editor';
    return new Worker(`${assets}/${name}.worker.js`);
  },
};

/** Kept for this tab only: a session token is a credential. */
const TOKEN_KEY = 'trading-explorer-token';

const DEFAULT_QUERY = `# The Trading API's GraphQL. Paste a PAT session token (POST /v1/pat/login) or an
# OAuth access token above, then run this query (Ctrl-Enter).
query MyAccounts {
  accounts {
    id
    number
    baseCurrency
    balances { currency cash pendingIn pendingOut availableToTrade }
  }
}
`;

function fetcherFor(token: string): Fetcher {
  return async (params) => {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(params),
    });
    return response.json();
  };
}

function TokenBar(props: { token: string; onApply: (token: string) => void }) {
  const [draft, setDraft] = useState(props.token);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onApply(draft.trim().replace(/^Bearer\s+/i, ''));
  };
  return h(
    'form',
    { id: 'token-bar', onSubmit: submit },
    h('label', { htmlFor: 'token' }, 'Bearer token'),
    h('input', {
      id: 'token',
      type: 'password',
      autoComplete: 'off',
      spellCheck: false,
      placeholder: 'A PAT session (POST /v1/pat/login) or an OAuth access token',
      value: draft,
      onChange: (e: { target: { value: string } }) => setDraft(e.target.value),
    }),
    h('button', { id: 'apply-token', type: 'submit' }, 'Use token'),
    h(
      'span',
      { id: 'token-state', 'data-state': props.token ? 'set' : 'unset' },
      props.token ? 'Sent as Authorization: Bearer …' : 'No token: every operation gets 401',
    ),
  );
}

function Explorer() {
  const [token, setToken] = useState(() => sessionStorage.getItem(TOKEN_KEY) ?? '');
  // A new fetcher re-reads the schema (introspection needs a token too).
  const fetcher = useMemo(() => fetcherFor(token), [token]);
  const apply = (next: string) => {
    if (next) sessionStorage.setItem(TOKEN_KEY, next);
    else sessionStorage.removeItem(TOKEN_KEY);
    setToken(next);
  };
  return h(
    'div',
    { id: 'explorer-layout' },
    h(TokenBar, { token, onApply: apply }),
    h(
      'div',
      { id: 'graphiql-container' },
      h(GraphiQL, { fetcher, defaultQuery: DEFAULT_QUERY, isHeadersEditorEnabled: false, shouldPersistHeaders: false }),
    ),
  );
}

createRoot(root).render(h(StrictMode, null, h(Explorer)));
