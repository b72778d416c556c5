// The scope of a learned trust rule (core/trust-rule.ts): what the approvals of a run earned, learned
// here from the approved requests themselves, and the check of a new call against it.
//
// A rule never approves more than what earned it:
// - only approvals by people the requester cannot be count (`earningReviewers`): not the requester's
//   own identity, not the policy or the system (automatic decisions), and not a door the requester's
//   side holds: a chat (an approval card, whose token the requester may have minted, or an agent
//   framework's chat, whose answer the agent itself relays). Such an approval says nothing about what
//   people think, so it neither extends nor breaks a run;
// - a call is approved only for a requester whose calls earned the rule, at a risk no higher and a
//   quorum no larger than an earning call's, naming approvers an earning call named;
// - each field's value must be one an earning call had (strings, booleans, null: at most `maxValues`
//   distinct values are learned; more, or a long text, and the field is not approved at all), or
//   within the range they spanned (numbers); an array's length within the lengths seen. Items are
//   fields too (their labels and details), so a call with items no earning call had goes to a person.
// An admin widens a scope only at acceptance, explicitly (to every requester, or a field to any
// value), and the acceptance's audit event says so.
import { InvalidInputError } from "../core/errors.js";
import { normalizeIdentity, sameIdentity } from "../core/identity.js";
import { normalizeItems } from "../core/new-request.js";
import {
  type ApprovalRequest,
  type Decision,
  type ParsedRequestInput,
  RISKS,
  type Risk,
} from "../core/schemas.js";
import { AUTOMATIC_METHODS } from "../core/state.js";
import type { TrustScope, TrustWidening, ValueConstraint } from "../core/trust-rule.js";

/** Distinct values of one field learned as an enumeration; past it the field varies too much. */
export const DEFAULT_MAX_VALUES = 5;
/** Strings longer than this are not enumerated (the field is then not approved without widening). */
export const MAX_VALUE_CHARS = 1000;
/** Bounds on what a scope lists (the stores refuse larger ones; see trustScopeSchema). */
const MAX_NAMES = 1000;
const MAX_APPROVER_SETS = 100;

/** Channels whose answer the requester's side may hold (see the top of this file). */
const REACHABLE_CHANNELS = new Set<Decision["channel"]>(["chat", "system"]);
/** Names the engine decides under by itself. */
const MACHINE_REVIEWERS = new Set(["policy", "system"]);

/** The people (normal form) whose approvals settled `request`, when every one of them counts (see
 * the top of this file); undefined otherwise. */
export function earningReviewers(request: ApprovalRequest): string[] | undefined {
  const approvals = request.decisions.filter((d) => d.outcome === "approved");
  if (request.decision && !approvals.includes(request.decision)) approvals.push(request.decision);
  if (approvals.length === 0) return undefined;
  const people = new Set<string>();
  for (const d of approvals) {
    if (
      AUTOMATIC_METHODS.has(d.method) ||
      REACHABLE_CHANNELS.has(d.channel) ||
      MACHINE_REVIEWERS.has(normalizeIdentity(d.reviewer)) ||
      sameIdentity(d.reviewer, request.requester)
    ) {
      return undefined;
    }
    people.add(normalizeIdentity(d.reviewer));
  }
  return [...people];
}

/** A call as the scope sees it: a stored request, or a new request's input. */
interface Call {
  requester: string;
  risk?: Risk | undefined;
  quorum: number;
  approvers: readonly string[];
  /** `{args, items}`: what the value constraints' paths point into. */
  fields: Record<string, unknown>;
}

function callOf(r: ApprovalRequest | ParsedRequestInput): Call {
  const items = "id" in r ? r.items : normalizeItems(r.items);
  return {
    requester: r.requester,
    risk: r.risk,
    quorum: r.quorum,
    approvers: r.approvers,
    fields: {
      args: r.args,
      items: items.map((i) =>
        i.detail === undefined ? { label: i.label } : { label: i.label, detail: i.detail },
      ),
    },
  };
}

const riskRank = (risk: Risk | undefined): number => (risk ? RISKS.indexOf(risk) + 1 : 0);

/** An approver list in one form: normal form, distinct, sorted. */
const approverSet = (approvers: readonly string[]): string[] =>
  [...new Set(approvers.map(normalizeIdentity))].sort();

/** What one field's earning values were, as they are read. */
interface FieldSeen {
  values: Map<string, string | boolean | null>;
  /** More distinct values than kept. */
  many: boolean;
  /** A string too long to enumerate. */
  long: boolean;
  min?: number;
  max?: number;
  minLength?: number;
  maxLength?: number;
}

/** Learns a scope from the approved requests of a run, one at a time. */
export class ScopeLearner {
  private readonly requesters = new Set<string>();
  private readonly reviewers = new Set<string>();
  private risk = 0;
  private quorum = 1;
  private readonly approverSets = new Map<string, string[]>();
  private readonly fields = new Map<string, FieldSeen>();

  constructor(private readonly maxValues = DEFAULT_MAX_VALUES) {}

  add(request: ApprovalRequest, reviewers: readonly string[]): void {
    const call = callOf(request);
    if (this.requesters.size < MAX_NAMES) this.requesters.add(normalizeIdentity(call.requester));
    for (const r of reviewers) if (this.reviewers.size < MAX_NAMES) this.reviewers.add(r);
    this.risk = Math.max(this.risk, riskRank(call.risk));
    this.quorum = Math.max(this.quorum, call.quorum);
    const set = approverSet(call.approvers);
    if (this.approverSets.size < MAX_APPROVER_SETS) this.approverSets.set(set.join("\n"), set);
    walk(call.fields, "", (path, v) => this.see(path, v));
  }

  private see(path: string, v: Visited): void {
    if (v === NOT_JSON) return; // stored calls are JSON
    let f = this.fields.get(path);
    if (!f) {
      f = { values: new Map(), many: false, long: false };
      this.fields.set(path, f);
    }
    if (v instanceof ArrayLength) {
      f.minLength = Math.min(f.minLength ?? v.n, v.n);
      f.maxLength = Math.max(f.maxLength ?? v.n, v.n);
    } else if (typeof v === "number") {
      f.min = Math.min(f.min ?? v, v);
      f.max = Math.max(f.max ?? v, v);
    } else if (typeof v === "string" && v.length > MAX_VALUE_CHARS) {
      f.long = true;
    } else {
      const key = JSON.stringify(v);
      if (f.values.has(key)) return;
      if (f.values.size >= this.maxValues) f.many = true;
      else f.values.set(key, v);
    }
  }

  scope(): TrustScope {
    const values: ValueConstraint[] = [];
    for (const [path, f] of [...this.fields].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const c: ValueConstraint = { path };
      if (f.minLength !== undefined && f.maxLength !== undefined) {
        c.length = { min: f.minLength, max: f.maxLength };
      }
      if (f.min !== undefined && f.max !== undefined) c.range = { min: f.min, max: f.max };
      if (f.values.size > 0) {
        // In the order of their JSON text, so a scope reads (and compares) the same however learned.
        c.oneOf = [...f.values].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
      }
      if (f.many) c.varies = `more than ${this.maxValues} distinct values`;
      else if (f.long) c.varies = `values longer than ${MAX_VALUE_CHARS} characters`;
      if (f.many || f.long) delete c.oneOf;
      values.push(c);
    }
    const scope: TrustScope = {
      requesters: [...this.requesters].sort(),
      reviewers: [...this.reviewers].sort(),
      maxQuorum: this.quorum,
      approverSets: [...this.approverSets.values()],
      values,
    };
    const risk = RISKS[this.risk - 1];
    if (risk) scope.maxRisk = risk;
    return scope;
  }
}

/** Why `input` is outside the scope (a sentence), or undefined when the scope covers it. */
export function scopeRefusal(scope: TrustScope, input: ParsedRequestInput): string | undefined {
  const call = callOf(input);
  const requester = normalizeIdentity(call.requester);
  if (!scope.anyRequester && !scope.requesters.includes(requester)) {
    return `requester ${requester} earned no approvals of it`;
  }
  if (riskRank(call.risk) > riskRank(scope.maxRisk)) {
    return `risk ${call.risk} is higher than any approved (${scope.maxRisk ?? "none stated"})`;
  }
  if (call.quorum > scope.maxQuorum) {
    return `quorum ${call.quorum} is larger than any approved (${scope.maxQuorum})`;
  }
  const set = approverSet(call.approvers).join("\n");
  if (!scope.approverSets.some((s) => s.join("\n") === set)) {
    return "it names approvers no approved call named";
  }
  const constraints = new Map(scope.values.map((c) => [c.path, c]));
  let refused: string | undefined;
  walk(call.fields, "", (path, v) => {
    refused ??= valueRefusal(constraints.get(path), path, v);
  });
  return refused;
}

function valueRefusal(
  c: ValueConstraint | undefined,
  path: string,
  v: Visited,
): string | undefined {
  if (!c) return `${path} was in no approved call`;
  if (v === NOT_JSON) return `${path} is not a JSON value`;
  if (c.any) return undefined;
  if (c.varies !== undefined) return `${path} took ${c.varies} in the approvals`;
  if (v instanceof ArrayLength) {
    return c.length && v.n >= c.length.min && v.n <= c.length.max
      ? undefined
      : `${path} has ${v.n} elements, outside the approved lengths`;
  }
  if (typeof v === "number") {
    return c.range && v >= c.range.min && v <= c.range.max
      ? undefined
      : `${path} is ${v}, outside the approved range`;
  }
  return c.oneOf?.includes(v) ? undefined : `${path} has a value no approved call had`;
}

/** `scope` widened as an admin asked. Refuses a path the scope does not have, and a scope that
 * would still approve nothing (a field that varies, not widened). */
export function widenScope(scope: TrustScope, widen: TrustWidening = {}): TrustScope {
  const paths = new Set(scope.values.map((c) => c.path));
  const any = new Set(widen.anyValue ?? []);
  for (const p of any) {
    if (!paths.has(p)) {
      throw new InvalidInputError(
        `\`${p}\` is not a field of this call; its fields: ${[...paths].join(", ") || "none"}`,
        "anyValue",
      );
    }
  }
  const values = scope.values.map((c) => (any.has(c.path) ? { ...c, any: true } : { ...c }));
  const varying = values.filter((c) => c.varies !== undefined && !c.any);
  if (varying.length > 0) {
    throw new InvalidInputError(
      `no call would be approved: ${varying.map((c) => `\`${c.path}\` took ${c.varies}`).join("; ")}. Widen such a field explicitly (anyValue) to approve any value there, or leave the suggestion`,
      "anyValue",
    );
  }
  const out: TrustScope = { ...scope, values };
  if (widen.anyRequester) out.anyRequester = true;
  return out;
}

// --- walking a call's fields ------------------------------------------------------------------

type Leaf = string | number | boolean | null;

/** An array's length, visited at the array's own path. */
class ArrayLength {
  constructor(readonly n: number) {}
}

/** A value JSON has no form for: it matches nothing. */
const NOT_JSON: unique symbol = Symbol("not JSON");
type Visited = Leaf | ArrayLength | typeof NOT_JSON;

/** Deeper than any args the core schemas accept; a guard, as in args-shape.ts. */
const MAX_DEPTH = 256;

/** One segment of a JSON Pointer; a key spelled `*` is `~2` (`*` stands for array elements). */
function segment(key: string): string {
  return key === "*" ? "~2" : key.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** Visits every leaf and array of `value`, as JSON sees it (undefined keys left out). */
function walk(
  value: unknown,
  path: string,
  visit: (path: string, v: Visited) => void,
  depth = 0,
): void {
  if (depth > MAX_DEPTH) throw new RangeError(`args nested deeper than ${MAX_DEPTH} levels`);
  if (
    value !== null &&
    typeof value === "object" &&
    typeof (value as { toJSON?: unknown }).toJSON === "function"
  ) {
    value = (value as { toJSON(): unknown }).toJSON();
  }
  if (Array.isArray(value)) {
    visit(path, new ArrayLength(value.length));
    for (const v of value) walk(v ?? null, `${path}/*`, visit, depth + 1);
    return;
  }
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined || typeof v === "function") continue;
      walk(v, `${path}/${segment(k)}`, visit, depth + 1);
    }
    return;
  }
  if (
    value === null ||
    typeof value === "string" ||
    typeof value === "number" ||
    typeof value === "boolean"
  ) {
    visit(path, value);
    return;
  }
  // A bigint, a symbol, or undefined or a function at the top: no approved (stored) call had one.
  visit(path, NOT_JSON);
}
