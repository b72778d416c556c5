// The Store contract's part on learned trust rules (Store.insertTrustRule, listTrustRules,
// revokeTrustRule): run by `runStoreContract`. A store that leaves these optional methods out names
// the tests in `skip`, with its reason.
import { expect } from "vitest";
import { verifyAuditLog } from "../audit/verify.js";
import type { Store } from "../core/store.js";
import {
  TRUST_RULE_ACCEPTED,
  TRUST_RULE_REVOKED,
  type TrustRule,
  type TrustScope,
  trustRuleAccepted,
  trustRuleRevoked,
} from "../core/trust-rule.js";

let counter = 0;
function makeRule(over: Partial<TrustRule> = {}): TrustRule {
  counter++;
  return {
    id: `trust_${String(counter).padStart(8, "0")}`,
    action: "files.write",
    shapeHash: "a".repeat(64),
    shape: '{"content":string,"path":string}',
    approvals: 20,
    createdBy: "admin",
    createdAt: 1_700_000_000_000 + counter,
    ...over,
  };
}

type Methods = Required<Pick<Store, "insertTrustRule" | "listTrustRules" | "revokeTrustRule">>;
function methods(store: Store): Methods {
  const { insertTrustRule, listTrustRules, revokeTrustRule } = store;
  if (!insertTrustRule || !listTrustRules || !revokeTrustRule) {
    throw new Error(`the ${store.kind} store has no trust rule methods: name these tests in skip`);
  }
  return {
    insertTrustRule: insertTrustRule.bind(store),
    listTrustRules: listTrustRules.bind(store),
    revokeTrustRule: revokeTrustRule.bind(store),
  };
}

export function trustRuleContract(
  test: (name: string, fn: () => Promise<void>) => void,
  get: () => Store,
): void {
  test("trust rules: stored, listed and revoked, each with its audit event", async () => {
    const store = get();
    const t = methods(store);
    const rule = makeRule();
    const res = await t.insertTrustRule(rule, [trustRuleAccepted(rule)]);
    expect(res).toMatchObject({ created: true, rule });
    expect(res.events).toHaveLength(1);
    expect(res.events[0]).toMatchObject({
      type: "notified",
      actor: "admin",
      data: { kind: TRUST_RULE_ACCEPTED, ruleId: rule.id, action: rule.action },
    });
    expect(await t.listTrustRules()).toEqual([rule]);

    const revoked = await t.revokeTrustRule(rule.id, "root", rule.createdAt + 5, [
      trustRuleRevoked(rule, "root", rule.createdAt + 5),
    ]);
    expect(revoked.revoked).toBe(true);
    expect(revoked.rule).toEqual({ ...rule, revokedBy: "root", revokedAt: rule.createdAt + 5 });
    expect(revoked.events[0]).toMatchObject({
      actor: "root",
      data: { kind: TRUST_RULE_REVOKED, ruleId: rule.id },
    });
    expect(await t.listTrustRules()).toEqual([]);
    expect(await t.listTrustRules({ includeRevoked: true })).toEqual([revoked.rule]);
    const kinds = (await store.listAudit({})).map((e) => e.data.kind);
    expect(kinds).toEqual([TRUST_RULE_ACCEPTED, TRUST_RULE_REVOKED]);
    expect(await verifyAuditLog(store)).toMatchObject({ ok: true });
  });

  test("trust rules: one active rule per action and shape; revoking makes room", async () => {
    const t = methods(get());
    const first = makeRule();
    await t.insertTrustRule(first, [trustRuleAccepted(first)]);
    const again = makeRule();
    const dup = await t.insertTrustRule(again, [trustRuleAccepted(again)]);
    expect(dup).toEqual({ rule: first, created: false, events: [] });
    const otherShape = makeRule({ shapeHash: "b".repeat(64) });
    const otherAction = makeRule({ action: "files.delete" });
    expect((await t.insertTrustRule(otherShape, [])).created).toBe(true);
    expect((await t.insertTrustRule(otherAction, [])).created).toBe(true);
    expect((await t.listTrustRules()).map((r) => r.id)).toEqual([
      first.id,
      otherShape.id,
      otherAction.id,
    ]);
    await t.revokeTrustRule(first.id, "admin", first.createdAt + 10, []);
    const next = makeRule();
    expect((await t.insertTrustRule(next, [trustRuleAccepted(next)])).created).toBe(true);
    expect((await t.listTrustRules()).map((r) => r.id)).toEqual([
      otherShape.id,
      otherAction.id,
      next.id,
    ]);
    expect(await get().listAudit({})).toHaveLength(2);
  });

  test("trust rules: the scope is kept as given and read back; a malformed one is refused", async () => {
    const t = methods(get());
    const scope: TrustScope = {
      requesters: ["agent-a"],
      anyRequester: true,
      reviewers: ["alice", "bob"],
      maxRisk: "medium",
      maxQuorum: 2,
      approverSets: [[], ["ops", "sre"]],
      values: [
        { path: "/args/cmd", oneOf: ["ls -la", "ls \u0000 \u00e9", true, null], any: true },
        { path: "/args/n", range: { min: -1.5, max: 1e12 } },
        { path: "/args/content", varies: "more than 5 distinct values" },
        { path: "/items", length: { min: 0, max: 3 } },
      ],
    };
    const rule = makeRule({ scope });
    expect((await t.insertTrustRule(rule, [trustRuleAccepted(rule)])).rule).toEqual(rule);
    expect(await t.listTrustRules()).toEqual([rule]);
    const bad = makeRule({
      shapeHash: "c".repeat(64),
      scope: { ...scope, maxQuorum: 0 },
    });
    await expect(t.insertTrustRule(bad, [])).rejects.toMatchObject({
      code: "invalid_input",
      field: "scope",
    });
    expect(await t.listTrustRules()).toEqual([rule]);
  });

  test("trust rules: revoking an unknown or revoked rule writes nothing", async () => {
    const store = get();
    const t = methods(store);
    const rule = makeRule();
    await t.insertTrustRule(rule, []);
    expect(
      await t.revokeTrustRule("trust_missing", "admin", 1, [trustRuleRevoked(rule, "a", 1)]),
    ).toEqual({ rule: undefined, revoked: false, events: [] });
    await t.revokeTrustRule(rule.id, "admin", 2, []);
    const twice = await t.revokeTrustRule(rule.id, "other", 3, [trustRuleRevoked(rule, "b", 3)]);
    expect(twice).toMatchObject({ revoked: false, events: [] });
    expect(twice.rule).toMatchObject({ revokedBy: "admin", revokedAt: 2 });
    expect(await store.listAudit({})).toEqual([]);
  });
}
