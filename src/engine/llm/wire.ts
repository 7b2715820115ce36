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
