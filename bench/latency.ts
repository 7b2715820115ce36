/**
 * The latency model shared by the bench server and the bench runner. Each request's service time is
 * fixed latency plus a jitter drawn from a hash of the request's message texts, so the server and
 * the runner (which attributes calls to steps and stages) compute the same value for the same call
 * without talking to each other, and a repeated run sees the same delays.
 */

export interface LatencyProfile {
  /** Fixed part of every call, in ms. */
  latencyMs: number;
  /** Up to this much more, uniformly spread over requests, in ms. */
  jitterMs: number;
  /** Changes which requests get which jitter. */
  seed: number;
}

/** FNV-1a over UTF-16 code units, 32 bits. */
export function fnv1a(text: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * What identifies a request for the latency model: the message texts in order. Roles are left
 * out on purpose: a backend may rename them on the wire (system → developer), the text stays.
 */
export function requestKey(contents: readonly string[]): string {
  return contents.join('\u0001');
}

/**
 * Service time of one request in whole ms (timers have ms resolution): `latencyMs + jitterMs × u`,
 * u ∈ [0, 1) from the request key.
 */
export function latencyFor(key: string, profile: LatencyProfile): number {
  if (profile.jitterMs <= 0) return Math.round(profile.latencyMs);
  // Mix the seed in first, then scramble so nearby keys do not get nearby jitter.
  let h = fnv1a(key, (0x811c9dc5 ^ Math.imul(profile.seed | 0, 0x9e3779b1)) >>> 0);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  const u = (h >>> 0) / 4294967296;
  return Math.round(profile.latencyMs + profile.jitterMs * u);
}
