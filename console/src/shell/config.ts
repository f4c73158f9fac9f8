// What the serving process tells the page (GET /console/config.json): which sections it serves,
// where each service's API is, and whether an API key is needed at all (the rate limit service
// alone takes none).

import type { ServiceId } from '../services.js';

export interface ConsoleConfig {
  /** Services this process serves, in the order their sections are shown. */
  services: ServiceId[];
  /** Base URL of each served service's API as seen from the page ('' = this origin). */
  bases: Partial<Record<ServiceId, string>>;
  /** True when some served service needs an API key. */
  signIn: boolean;
}

export interface WhoAmI {
  tenant: string;
  user: string | null;
  keyId: string;
  name: string | null;
  scopes: string[];
}

export async function loadConfig(): Promise<ConsoleConfig> {
  const response = await fetch('/console/config.json', { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`the console configuration did not load (HTTP ${response.status})`);
  const body = (await response.json()) as Partial<ConsoleConfig>;
  return {
    services: Array.isArray(body.services) ? body.services : [],
    bases: body.bases ?? {},
    signIn: body.signIn !== false,
  };
}
