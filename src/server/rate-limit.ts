// Per-client rate limiting: a token bucket per key (a token id, or a client address for failed
// logins) holding up to `max` requests and refilling at `max` per `windowMs`. Kept in this process:
// behind a load balancer each process limits on its own, so the effective limit is N times as high.

export interface RateLimitOptions {
  /** Requests a client may make in a burst, and per window on average. */
  max: number;
  windowMs: number;
}

export interface RateDecision {
  ok: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until one more request is allowed (0 when `ok`). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  take(key: string): RateDecision;
  /** Looks without taking. */
  peek(key: string): RateDecision;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets untouched for this many windows are forgotten, bounding memory. */
const FORGET_AFTER_WINDOWS = 2;
const SWEEP_EVERY = 1000;

export function createRateLimiter(
  options: RateLimitOptions,
  now: () => number = Date.now,
): RateLimiter {
  const { max, windowMs } = options;
  if (!Number.isFinite(max) || max < 1) {
    throw new TypeError(`Expected \`rateLimit.max\` to be a number from 1 up, got \`${max}\``);
  }
  if (!Number.isFinite(windowMs) || windowMs < 1) {
    throw new TypeError(
      `Expected \`rateLimit.windowMs\` to be a number from 1 up, got \`${windowMs}\``,
    );
  }
  const perMs = max / windowMs;
  const buckets = new Map<string, Bucket>();
  let calls = 0;

  function refill(key: string, t: number): Bucket {
    const b = buckets.get(key);
    if (!b) {
      const fresh = { tokens: max, at: t };
      buckets.set(key, fresh);
      return fresh;
    }
    b.tokens = Math.min(max, b.tokens + (t - b.at) * perMs);
    b.at = t;
    return b;
  }

  function sweep(t: number) {
    for (const [key, b] of buckets) {
      if (t - b.at > FORGET_AFTER_WINDOWS * windowMs) buckets.delete(key);
    }
  }

  function decision(b: Bucket, ok: boolean): RateDecision {
    const missing = Math.max(0, 1 - b.tokens);
    return {
      ok,
      limit: max,
      remaining: Math.max(0, Math.floor(b.tokens)),
      retryAfterSeconds: ok ? 0 : Math.max(1, Math.ceil(missing / perMs / 1000)),
    };
  }

  return {
    take(key) {
      const t = now();
      if (++calls % SWEEP_EVERY === 0) sweep(t);
      const b = refill(key, t);
      if (b.tokens < 1) return decision(b, false);
      b.tokens -= 1;
      return decision(b, true);
    },
    peek(key) {
      const b = refill(key, now());
      return decision(b, b.tokens >= 1);
    },
  };
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000 };

/** Reads a rate limit as written on a command line: `600/60s`, `600/min`, `10/s`, `1000/5m`,
 * `100/500ms`, or `off` (no limit). For `airlock serve --rate-limit`. */
export function parseRateLimit(text: string): RateLimitOptions | false {
  const t = text.trim().toLowerCase();
  if (t === "off" || t === "false" || t === "none") return false;
  const m = /^(\d+)\s*\/\s*(\d*)\s*(ms|s|min|m|h)$/.exec(t);
  if (!m) {
    throw new TypeError(
      `Expected a rate limit like \`600/60s\`, \`600/min\` or \`off\`, got \`${text}\``,
    );
  }
  const max = Number(m[1]);
  const windowMs = Number(m[2] || "1") * (UNIT_MS[m[3] as string] as number);
  // Validated like the server option.
  createRateLimiter({ max, windowMs });
  return { max, windowMs };
}
