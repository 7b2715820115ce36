import { SkillOptError } from '../errors';

/**
 * A 200 whose body is not the API's JSON: the SDKs hand back the raw text (a proxy's sign-in page,
 * a web server at the base URL). Waiting and asking again will not help, and "empty reply" would
 * send the person to the wrong setting, so say what came back and which setting to check.
 */
export function notAnApiReply(body: unknown, label: string): SkillOptError | undefined {
  if (typeof body === 'object' && body !== null) return undefined;
  const start = String(body).replace(/\s+/g, ' ').trim().slice(0, 80);
  return new SkillOptError(
    'llm',
    `${label}: the server answered with something that is not an API reply ("${start}")`,
    {
      fix: 'check the base URL (model.optimizer_base_url / model.target_base_url): it must point at the API itself, often ending in /v1, not at a web page or a proxy sign-in',
    },
    { kind: 'not_an_api' },
  );
}

/**
 * A base URL split for the SDKs: they append the API path to the base as a string, so a query
 * string left in it (`…/v1?api-key=…`) would end up in front of the path. The query goes to
 * `defaultQuery` instead, which they send with every request.
 */
export function splitBaseUrl(url: string): { baseURL: string; defaultQuery?: Record<string, string> } {
  const q = url.indexOf('?');
  if (q < 0) return { baseURL: url };
  const hash = url.indexOf('#', q);
  const search = url.slice(q + 1, hash < 0 ? undefined : hash);
  const defaultQuery = Object.fromEntries(new URLSearchParams(search));
  return { baseURL: url.slice(0, q), ...(Object.keys(defaultQuery).length ? { defaultQuery } : {}) };
}
