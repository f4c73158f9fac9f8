// Sign-in: the API key goes into the tab's session storage (api.ts) and is checked against the
// serving process's /console/whoami before the console opens. It is never put in a URL.

import { useState } from 'preact/hooks';
import { api, ApiFailure, storeKey } from '../api.js';
import { describeError } from '../ui/error-box.js';
import { Form, TextField } from '../ui/forms.js';
import type { WhoAmI } from './config.js';
import { ALL_VIEWS_SCOPES } from './scopes.js';

export async function whoAmI(): Promise<WhoAmI> {
  return api<WhoAmI>('/console/whoami');
}

export function SignIn({ onSignedIn }: { onSignedIn: (who: WhoAmI) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    const trimmed = key.trim();
    if (trimmed === '') {
      setError('Enter an API key.');
      return;
    }
    setBusy(true);
    storeKey(trimmed);
    try {
      const who = await whoAmI();
      setError(undefined);
      onSignedIn(who);
    } catch (err) {
      storeKey(null);
      setError(
        err instanceof ApiFailure && err.status === 401
          ? 'This key is not valid (unknown or revoked).'
          : describeError(err).detail,
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin" id="main">
      <h1>Sluice console</h1>
      <p>Sign in with an API key. It is kept in this tab only and forgotten when the tab closes.</p>
      <Form label="Sign in" onSubmit={submit} submitLabel="Sign in" busy={busy}>
        <TextField
          label="API key"
          type="password"
          name="api-key"
          autocomplete="off"
          value={key}
          onValue={setKey}
          hint={`Create one that opens every view with: sluice keys create --scopes ${ALL_VIEWS_SCOPES}`}
          error={error}
        />
      </Form>
    </main>
  );
}
