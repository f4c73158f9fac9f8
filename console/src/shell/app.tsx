// The frame around the sections: the signed-in tenant and scopes, sign-out, navigation between
// the sections this process serves, and the current route. A section whose service this process
// does not serve is not listed; reaching it by URL says so instead of failing.

import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, storedKey, storeKey } from '../api.js';
import type { Section } from '../section.js';
import { ErrorBox, Notice } from '../ui/error-box.js';
import type { ConsoleConfig, WhoAmI } from './config.js';
import { href, navigate, resolve, useLocation } from './router.js';
import { ALL_VIEWS_SCOPES, SECTION_SCOPE, sectionAllowed } from './scopes.js';
import { ScopesContext } from './scopes-context.js';
import { SignIn, whoAmI } from './signin.js';

const titleOf = (sections: readonly Section[], id: string) => sections.find((s) => s.id === id)?.title ?? id;

type Auth =
  | { state: 'checking' }
  | { state: 'signed-out' }
  | { state: 'signed-in'; who: WhoAmI | undefined }
  | { state: 'failed'; error: unknown };

export function App({ config, sections }: { config: ConsoleConfig; sections: readonly Section[] }) {
  const [auth, setAuth] = useState<Auth>(() =>
    !config.signIn
      ? { state: 'signed-in', who: undefined }
      : storedKey()
        ? { state: 'checking' }
        : { state: 'signed-out' },
  );
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    if (auth.state !== 'checking') return;
    let live = true;
    whoAmI().then(
      (who) => live && setAuth({ state: 'signed-in', who }),
      (error: unknown) => {
        if (!live) return;
        if (error instanceof ApiFailure && error.status === 401) {
          storeKey(null);
          setAuth({ state: 'signed-out' });
        } else setAuth({ state: 'failed', error });
      },
    );
    return () => {
      live = false;
    };
  }, [auth.state, attempt]);

  if (auth.state === 'signed-out')
    return <SignIn onSignedIn={(who) => setAuth({ state: 'signed-in', who })} />;
  if (auth.state === 'checking')
    return (
      <main id="main" class="signin">
        <p role="status">Checking the API key…</p>
      </main>
    );
  if (auth.state === 'failed')
    return (
      <main id="main" class="signin">
        <ErrorBox error={auth.error} context="Checking the API key" />
        <button
          type="button"
          onClick={() => {
            setAuth({ state: 'checking' });
            setAttempt((a) => a + 1);
          }}
        >
          Try again
        </button>
      </main>
    );

  const signOut = () => {
    storeKey(null);
    navigate('#/');
    setAuth({ state: 'signed-out' });
  };
  const served = config.services
    .map((id) => sections.find((s) => s.id === id))
    .filter((s): s is Section => s !== undefined);
  return <Frame config={config} sections={served} all={sections} who={auth.who} onSignOut={signOut} />;
}

function Frame(props: {
  config: ConsoleConfig;
  sections: readonly Section[];
  all: readonly Section[];
  who: WhoAmI | undefined;
  onSignOut: () => void;
}) {
  const { who } = props;
  // Sections the key's scopes do not open are left out of the navigation; reaching one by URL
  // says which scope it needs instead of failing on the first call.
  const sections = props.sections.filter((s) => sectionAllowed(s.id, who?.scopes));
  const location = useLocation();
  const main = useRef<HTMLElement>(null);
  const first = sections.find((s) => s.routes.some((r) => r.nav));
  const start = first ? href(first.id, first.routes.find((r) => r.nav)!.pattern) : undefined;

  useEffect(() => {
    if (location.section === '' && start) navigate(start);
  }, [location.section, start]);

  const found = resolve(sections, location);
  const title = found ? `${found.route.title} · ${found.section.title}` : 'Sluice console';
  useEffect(() => {
    document.title = `${title} — Sluice`;
  }, [title]);
  // After a navigation the focus moves to the content, so keyboard and screen-reader users start
  // there instead of at the top of the page. A layout effect runs before the new view is painted,
  // so the view never shows with the focus still on the link that was followed.
  const previous = useRef('');
  useLayoutEffect(() => {
    const key = `${location.section}${location.path}`;
    if (previous.current !== '' && previous.current !== key) main.current?.focus();
    previous.current = key;
  }, [location.section, location.path]);

  let content;
  if (found)
    content = (
      <ScopesContext.Provider value={who?.scopes}>{found.route.render(found.match)}</ScopesContext.Provider>
    );
  else if (location.section === '')
    content = (
      <Notice title="No section to show">
        This key opens none of the services this process runs. Sign out and sign in with a key made by{' '}
        <code>sluice keys create --scopes {ALL_VIEWS_SCOPES}</code>.
      </Notice>
    );
  else if (props.sections.some((s) => s.id === location.section))
    content = (
      <Notice title={`This key cannot open the ${titleOf(props.sections, location.section)} section`}>
        It needs the scope <code>{SECTION_SCOPE[location.section as Section['id']]}</code> (or{' '}
        <code>{location.section}</code>, <code>admin</code>). Sign out and sign in with a key that has it, for
        example one made by <code>sluice keys create --scopes {ALL_VIEWS_SCOPES}</code>.
      </Notice>
    );
  else if (
    props.all.some((s) => s.id === location.section) &&
    !sections.some((s) => s.id === location.section)
  )
    content = (
      <Notice title={`This process does not serve the ${location.section} service`}>
        Open the console of the process that runs it (for example <code>sluice serve</code>).
      </Notice>
    );
  else content = <Notice title="Page not found">{`Nothing at ${location.section}${location.path}.`}</Notice>;

  return (
    <div class="shell">
      <button type="button" class="skip" onClick={() => main.current?.focus()}>
        Skip to content
      </button>
      <header class="topbar">
        <span class="brand">Sluice console</span>
        {who ? (
          <span class="who" aria-label="Signed in as">
            <span>
              tenant <strong>{who.tenant}</strong>
            </span>
            <span>
              key <strong>{who.name ?? who.keyId}</strong>
            </span>
            <span class="scopes">
              scopes <strong>{who.scopes.join(', ')}</strong>
            </span>
          </span>
        ) : (
          <span class="who">no API key needed here</span>
        )}
        {props.config.signIn ? (
          <button type="button" onClick={props.onSignOut}>
            Sign out
          </button>
        ) : null}
      </header>
      <div class="layout">
        <nav class="sidenav" aria-label="Sections">
          {sections.map((section) => (
            <div key={section.id} class="nav-section">
              <h2>{section.title}</h2>
              <ul>
                {section.routes
                  .filter((r) => r.nav)
                  .map((r) => {
                    const active = location.section === section.id && location.path === r.pattern;
                    return (
                      <li key={r.pattern}>
                        <a href={href(section.id, r.pattern)} aria-current={active ? 'page' : undefined}>
                          {r.title}
                        </a>
                      </li>
                    );
                  })}
                {section.routes.length === 0 ? <li class="muted">nothing here yet</li> : null}
              </ul>
            </div>
          ))}
        </nav>
        <main id="main" ref={main} tabIndex={-1} aria-label={title}>
          {content}
        </main>
      </div>
    </div>
  );
}
