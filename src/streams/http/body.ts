// Request bodies that may be absent (create consumer, commit offsets, GET offsets): empty means
// "no options", a present body must be JSON of an accepted type.

import { checkContentType, HttpError, type HttpRequest } from '../../core/http/index.js';

export async function optionalJson(req: HttpRequest, types: readonly string[]): Promise<unknown> {
  const body = await req.body();
  if (body.length === 0 || body.toString('utf8').trim() === '') return undefined;
  checkContentType(req.headers['content-type'], types);
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (error) {
    throw new HttpError(400, '400', `request body is not valid JSON: ${(error as Error).message}`);
  }
}
