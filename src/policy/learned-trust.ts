// Learned trust: when people have approved the same action with the same args shape many times in a
// row (trust-suggestions.ts), an admin may accept a rule that approves such calls without asking.
// Accepted rules live in the store (Store.insertTrustRule...), audited; the policy here reads them
// and names the rule in every approval it gives. A rule approves only calls within its scope
// (trust-scope.ts): the requesters, risk, quorum, approvers and values its approvals earned, widened
// only where the admin said so at acceptance.
//
// The policy keeps the active rules in memory for `ttlMs` (1 s by default): an accept or a revoke
// through the same `LearnedTrust` takes effect at once (it drops the cache); one made by another
// server process on the same database, within `ttlMs`. Should the rules not be readable, the policy
// has no opinion, so the call waits for a person: failing closed, never approving on stale rules.
import { createRedactor, REDACTED, type RedactionOptions, type Redactor } from "../audit/redact.js";
import { ConflictError, InvalidInputError, NotFoundError } from "../core/errors.js";
import { normalizeIdentity } from "../core/identity.js";
import type { Policy, PolicyVerdict } from "../core/policy.js";
import type { Store } from "../core/store.js";
import {
  newTrustRuleId,
  type TrustRule,
  type TrustScope,
  type TrustWidening,
  trustRuleAccepted,
  trustRuleRevoked,
} from "../core/trust-rule.js";
import { argsShapeHash } from "./args-shape.js";
import { scopeRefusal, widenScope } from "./trust-scope.js";
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

/** Approves a call whose action and args shape match an active rule and that lies within the rule's
 * scope, naming the rule; no opinion otherwise (compose it with `firstVerdict` after your explicit
 * rules). */
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
    let rule: TrustRule | undefined;
    try {
      rule = rules.byKey.get(keyOf(input.action, argsShapeHash(input.args)));
      // A rule without a scope was accepted before scopes existed: it approves nothing.
      if (!rule?.scope || scopeRefusal(rule.scope, input) !== undefined) return undefined;
    } catch {
      return undefined; // args the rule cannot read (the engine refuses them next): a person decides
    }
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
  /** Distinct values of a field a rule learns as an enumeration; a field that took more is not
   * approved unless an admin widens it. @default 5 */
  maxValues?: number;
  /** See `learnedTrustPolicy`. @default 1000 */
  ttlMs?: number;
  /** @default Date.now */
  now?: () => number;
  /** Key names redacted from the scope the audit keeps, besides the built-in rules: the engine's
   * (`createAirlock({ redaction })`), as this writes to the log beside it. */
  redaction?: RedactionOptions;
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
  /** Stores the rule of a current suggestion (refusing anything else), with the scope its approvals
   * earned, widened only as `widen` says; audited under `by`, with the widening. */
  accept(
    input: { action: string; shapeHash: string; widen?: TrustWidening },
    by: string,
  ): Promise<TrustRule>;
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
  const redactor = createRedactor(options.redaction);
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
      ...(options.maxValues === undefined ? {} : { maxValues: options.maxValues }),
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
          existing.scope
            ? `\`${input.action}\` with this args shape is already approved by rule ${existing.id}`
            : `rule ${existing.id} for \`${input.action}\` with this args shape was accepted before rules kept their scope and approves nothing: revoke it, then accept this suggestion`,
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
      const widened = widening(input.widen);
      const scope = widenScope(suggestion.scope, widened);
      const at = now();
      const rule: TrustRule = {
        id: newTrustRuleId(at),
        action: suggestion.action,
        shapeHash: suggestion.shapeHash,
        shape: suggestion.shape,
        approvals: suggestion.streak,
        scope,
        createdBy: normalizeIdentity(by),
        createdAt: at,
      };
      // The audit keeps the scope with sensitive values redacted, and what the admin widened.
      const event = trustRuleAccepted(rule, {
        scope: redactScope(scope, redactor),
        ...(widened ? { widened } : {}),
      });
      const res = await m.insert(rule, [event]);
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

/** The widening asked for, or undefined when it widens nothing. */
function widening(w: TrustWidening | undefined): TrustWidening | undefined {
  const anyValue = [...new Set(w?.anyValue ?? [])];
  if (!w?.anyRequester && anyValue.length === 0) return undefined;
  return {
    ...(w?.anyRequester ? { anyRequester: true } : {}),
    ...(anyValue.length > 0 ? { anyValue } : {}),
  };
}

/** The scope as the audit keeps it: the values of a field under a sensitive key (`/args/password`)
 * replaced, and credentials inside any other value masked as everywhere in the log. */
function redactScope(scope: TrustScope, redactor: Redactor): TrustScope {
  const values = scope.values.map((c) => {
    const keys = c.path
      .split("/")
      .slice(1)
      .map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
    if (!keys.some((k) => redactor.isSensitiveKey(k))) return c;
    const { oneOf, range, ...rest } = c;
    return oneOf || range ? { ...rest, oneOf: [REDACTED] } : rest;
  });
  return redactor.redact({ ...scope, values });
}
