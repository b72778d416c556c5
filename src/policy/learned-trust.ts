// Learned trust: when people have approved the same action with the same args shape many times in a
// row (trust-suggestions.ts), an admin may accept a rule that approves such calls without asking.
// Accepted rules live in the store (Store.insertTrustRule...), audited; the policy here reads them
// and names the rule in every approval it gives.
//
// The policy keeps the active rules in memory for `ttlMs` (1 s by default): an accept or a revoke
// through the same `LearnedTrust` takes effect at once (it drops the cache); one made by another
// server process on the same database, within `ttlMs`. Should the rules not be readable, the policy
// has no opinion, so the call waits for a person: failing closed, never approving on stale rules.
import { ConflictError, InvalidInputError, NotFoundError } from "../core/errors.js";
import { normalizeIdentity } from "../core/identity.js";
import type { Policy, PolicyVerdict } from "../core/policy.js";
import type { Store } from "../core/store.js";
import {
  newTrustRuleId,
  type TrustRule,
  trustRuleAccepted,
  trustRuleRevoked,
} from "../core/trust-rule.js";
import { argsShapeHash } from "./args-shape.js";
import {
  DEFAULT_TRUST_THRESHOLD,
  keyOf,
  type RequestLister,
  suggestTrustRules,
  type TrustSuggestion,
} from "./trust-suggestions.js";

export { DEFAULT_TRUST_THRESHOLD, suggestTrustRules, type TrustSuggestion };

/** Where the policy reads the rules: a store (optional method: a store without it has none). */
export type TrustRuleSource = Pick<Store, "listTrustRules">;

export interface LearnedTrustPolicyOptions {
  /** How long the active rules are kept in memory, in ms. @default 1000 */
  ttlMs?: number;
  /** @default Date.now */
  now?: () => number;
}

/** A policy, plus `invalidate()`: the next call reads the rules again. */
export type LearnedTrustPolicy = Policy & { invalidate(): void };

/** Approves a call whose action and args shape match an active rule, naming the rule; no opinion
 * otherwise (compose it with `firstVerdict` after your explicit rules). */
export function learnedTrustPolicy(
  source: TrustRuleSource,
  options: LearnedTrustPolicyOptions = {},
): LearnedTrustPolicy {
  const ttlMs = options.ttlMs ?? 1000;
  const now = options.now ?? Date.now;
  let cache: { byKey: Map<string, TrustRule>; actions: Set<string>; at: number } | undefined;
  let loading: Promise<typeof cache> | undefined;
  // Bumped by invalidate(): a load that started before it must not refill the cache.
  let generation = 0;

  async function load() {
    const gen = generation;
    const rules = (await source.listTrustRules?.()) ?? [];
    const fresh = {
      byKey: new Map(rules.map((r) => [keyOf(r.action, r.shapeHash), r])),
      actions: new Set(rules.map((r) => r.action)),
      at: now(),
    };
    if (gen === generation) cache = fresh;
    return fresh;
  }

  async function active() {
    if (cache && now() - cache.at < ttlMs) return cache;
    loading ??= load().finally(() => {
      loading = undefined;
    });
    return loading;
  }

  const policy = async ({ input }: Parameters<Policy>[0]): Promise<PolicyVerdict | undefined> => {
    if (!source.listTrustRules) return undefined;
    let rules: Awaited<ReturnType<typeof active>>;
    try {
      rules = await active();
    } catch {
      return undefined; // unreadable rules: a person decides
    }
    if (!rules?.actions.has(input.action)) return undefined;
    const rule = rules.byKey.get(keyOf(input.action, argsShapeHash(input.args)));
    if (!rule) return undefined;
    return {
      level: "auto",
      reason: `learned trust rule ${rule.id} (${rule.action}, ${rule.approvals} approvals)`,
    };
  };
  return Object.assign(policy, {
    invalidate() {
      generation++;
      cache = undefined;
      loading = undefined;
    },
  });
}

export interface LearnedTrustOptions {
  /** Where rules are kept and requests are read. */
  store: Store;
  /** Approvals in a row before a call is suggested; 0 turns suggestions (and accepting) off.
   * @default 20 */
  threshold?: number;
  /** Decided requests read per suggestion scan, newest first. @default 1000 */
  scanLimit?: number;
  /** See `learnedTrustPolicy`. @default 1000 */
  ttlMs?: number;
  /** @default Date.now */
  now?: () => number;
}

/** Suggestions, the rules, accepting and revoking them, and the policy that applies them. */
export interface LearnedTrust {
  readonly threshold: number;
  /** Give it to `createAirlock({ policy })`, composed with your own rules. */
  readonly policy: LearnedTrustPolicy;
  /** The current suggestions; with `maxAgeMs`, those computed at most that long ago may be
   * returned again (for pages that only hint at them). */
  suggestions(options?: { maxAgeMs?: number }): Promise<TrustSuggestion[]>;
  rules(options?: { includeRevoked?: boolean }): Promise<TrustRule[]>;
  /** Stores the rule of a current suggestion (refusing anything else), audited under `by`. */
  accept(input: { action: string; shapeHash: string }, by: string): Promise<TrustRule>;
  /** Revokes an active rule, audited under `by`. */
  revoke(id: string, by: string): Promise<TrustRule>;
}

export function createLearnedTrust(options: LearnedTrustOptions): LearnedTrust {
  const { store } = options;
  const threshold = options.threshold ?? DEFAULT_TRUST_THRESHOLD;
  if (!Number.isSafeInteger(threshold) || threshold < 0) {
    throw new TypeError(`threshold must be a non-negative integer, got ${threshold}`);
  }
  const now = options.now ?? Date.now;
  const policy = learnedTrustPolicy(store, {
    ...(options.ttlMs === undefined ? {} : { ttlMs: options.ttlMs }),
    now,
  });
  const lister: RequestLister = { list: (f) => store.listRequests(f) };

  function methods() {
    const { insertTrustRule, listTrustRules, revokeTrustRule } = store;
    if (!insertTrustRule || !listTrustRules || !revokeTrustRule) {
      throw new InvalidInputError(`the ${store.kind} store cannot keep learned trust rules`);
    }
    return {
      insert: insertTrustRule.bind(store),
      list: listTrustRules.bind(store),
      revoke: revokeTrustRule.bind(store),
    };
  }

  let last: { at: number; items: TrustSuggestion[] } | undefined;
  async function suggestions(o: { maxAgeMs?: number } = {}): Promise<TrustSuggestion[]> {
    if (threshold === 0 || !store.listTrustRules) return [];
    if (last && o.maxAgeMs !== undefined && now() - last.at <= o.maxAgeMs) return last.items;
    const at = now();
    const rules = await store.listTrustRules();
    const items = await suggestTrustRules(lister, {
      threshold,
      rules,
      ...(options.scanLimit === undefined ? {} : { scanLimit: options.scanLimit }),
    });
    last = { at, items };
    return items;
  }

  return {
    threshold,
    policy,
    suggestions,
    async rules(o = {}) {
      return store.listTrustRules ? store.listTrustRules(o) : [];
    },
    async accept(input, by) {
      const m = methods();
      const existing = (await m.list()).find(
        (r) => r.action === input.action && r.shapeHash === input.shapeHash,
      );
      if (existing) {
        throw new ConflictError(
          `\`${input.action}\` with this args shape is already approved by rule ${existing.id}`,
        );
      }
      const suggestion = (await suggestions()).find(
        (s) => s.action === input.action && s.shapeHash === input.shapeHash,
      );
      if (!suggestion) {
        throw new ConflictError(
          threshold === 0
            ? "learned trust suggestions are turned off on this server (threshold 0)"
            : `\`${input.action}\` with this args shape is not a current suggestion: it needs ${threshold} approvals by people in a row with no rejection`,
        );
      }
      const at = now();
      const rule: TrustRule = {
        id: newTrustRuleId(at),
        action: suggestion.action,
        shapeHash: suggestion.shapeHash,
        shape: suggestion.shape,
        approvals: suggestion.streak,
        createdBy: normalizeIdentity(by),
        createdAt: at,
      };
      const res = await m.insert(rule, [trustRuleAccepted(rule)]);
      policy.invalidate();
      last = undefined;
      if (!res.created) {
        throw new ConflictError(
          `\`${input.action}\` with this args shape is already approved by rule ${res.rule.id}`,
        );
      }
      return res.rule;
    },
    async revoke(id, by) {
      const m = methods();
      const rule = (await m.list({ includeRevoked: true })).find((r) => r.id === id);
      if (!rule) throw new NotFoundError("trust rule", id);
      const at = now();
      const who = normalizeIdentity(by);
      const res = await m.revoke(id, who, at, [trustRuleRevoked(rule, who, at)]);
      policy.invalidate();
      last = undefined;
      if (!res.revoked || !res.rule) {
        throw new ConflictError(`trust rule ${id} was already revoked`);
      }
      return res.rule;
    },
  };
}
