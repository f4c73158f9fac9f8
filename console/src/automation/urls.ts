// The automation API's URLs as the page reaches them (serviceUrl adds the service's base).

import { serviceUrl } from '../services.js';

const enc = encodeURIComponent;

export const apiUrl = (path: string) => serviceUrl('automation', `/api/v1${path}`);
export const automationUrl = (id: string, rest = '') => apiUrl(`/automations/${enc(id)}${rest}`);
export const runUrl = (id: string, rest = '') => apiUrl(`/runs/${enc(id)}${rest}`);
export const exampleUrl = (automationId: string, exampleId: string, rest = '') =>
  automationUrl(automationId, `/examples/${enc(exampleId)}${rest}`);
export const experimentUrl = (automationId: string, experimentId: string, rest = '') =>
  automationUrl(automationId, `/experiments/${enc(experimentId)}${rest}`);
