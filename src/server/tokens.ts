// API tokens: who is calling and what they may do. A token is shown once, when it is created; only
// its SHA-256 is stored, so a copy of the database holds no usable secret. Lookup is by that hash.
// `TokenStore` is the storage port (SQLite in tokens-sqlite.ts, in-memory below); a PostgreSQL one
// implements the same six methods.
import { createHash, randomBytes } from "node:crypto";
import { z } from "zod";
import { InvalidInputError, NotFoundError } from "../core/errors.js";
import { normalizeIdentity } from "../core/identity.js";
import { newRequestId } from "../core/ids.js";
import { refuseBadIdentity } from "../core/schemas.js";

/** `agent` creates and reads its own requests; `reviewer` decides what it is an approver of; `admin`
 * manages tokens and may decide anything it did not create; `app` is a chat app's backend, which
 * authenticates its own users and mints approval-card tokens for the reviewers among them. */
export const ROLES = ["agent", "reviewer", "admin", "app"] as const;
export type Role = (typeof ROLES)[number];

/** Roles that decide, or let someone decide (`app` mints card tokens): an agent's token never
 * carries one, since no credential an agent holds may decide (core/authority.ts). */
const DECIDING_ROLES: readonly Role[] = ["reviewer", "admin", "app"];

/** Refused like every name that enters (refuseBadIdentity): mixed scripts, invisible characters only. */
const principalName = z.string().trim().min(1).max(200).superRefine(refuseBadIdentity);

/** The roles a stored token acts with. A token holding `agent` acts as an agent alone, whatever else
 * it holds: tokens stored before an agent's token could no longer carry a deciding role keep their
 * record, but nothing an agent holds decides, mints tokens or cards, or approves by its deadline. */
export function effectiveRoles(record: Pick<TokenRecord, "roles">): readonly Role[] {
  return record.roles.includes("agent") ? ["agent"] : record.roles;
}

/** What creating a token takes: the principal it authenticates, its roles and its groups. */
export const tokenInputSchema = z
  .object({
    name: principalName,
    roles: z.array(z.enum(ROLES)).min(1).max(ROLES.length),
    groups: z.array(principalName).max(100).default([]),
  })
  .strict()
  .refine((t) => !(t.roles.includes("agent") && t.roles.some((r) => DECIDING_ROLES.includes(r))), {
    message:
      "an agent's token cannot also be a reviewer, admin or app token: no credential an agent holds may decide; give the person or app a token of its own",
    path: ["roles"],
  });
export type TokenInput = z.input<typeof tokenInputSchema>;

/** A stored token, without its secret. */
export const tokenRecordSchema = z.object({
  id: z.string(),
  /** The principal: requester of what it creates, reviewer of what it decides. */
  name: z.string(),
  roles: z.array(z.enum(ROLES)),
  groups: z.array(z.string()),
  createdAt: z.number(),
  revokedAt: z.number().optional(),
});
export type TokenRecord = z.infer<typeof tokenRecordSchema>;

export interface CreatedToken {
  /** The secret, shown this once. */
  token: string;
  record: TokenRecord;
}

export interface TokenStore {
  readonly kind: string;
  /** Creates the token table if needed. Idempotent. */
  migrate(): Promise<void>;
  /** Stores a token given its hash. Replaces the record with the same id (used for the admin token
   * taken from `AIRLOCK_ADMIN_TOKEN`, whose value may change between starts). */
  put(record: TokenRecord, hash: string): Promise<void>;
  /** The active (not revoked) token with this hash. */
  findByHash(hash: string): Promise<TokenRecord | undefined>;
  list(): Promise<TokenRecord[]>;
  /** Marks the token revoked; returns it, or undefined when no token has this id. */
  revoke(id: string, at: number): Promise<TokenRecord | undefined>;
  close(): Promise<void>;
}

const TOKEN_PREFIX = "alk_";

export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** A new random secret: 32 bytes (256 bits) from the system's CSPRNG. */
export function newTokenSecret(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
}

export function newTokenId(now: number): string {
  return newRequestId(now).replace(/^req_/, "tok_");
}

/** Validates `input`, stores the hash of a fresh secret and returns the secret once. */
export async function createToken(
  store: TokenStore,
  input: TokenInput,
  now = Date.now(),
): Promise<CreatedToken> {
  const parsed = tokenInputSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.map(String).join(".") || undefined;
    throw new InvalidInputError(
      `invalid token: ${field ? `\`${field}\`: ` : ""}${issue?.message ?? "invalid value"}`,
      field,
    );
  }
  const token = newTokenSecret();
  const record: TokenRecord = {
    id: newTokenId(now),
    // One normal form (case, Unicode NFKC, invisible characters, spaces): `Alice` and `ＡＬＩＣＥ` are
    // one identity.
    name: normalizeIdentity(parsed.data.name),
    roles: [...new Set(parsed.data.roles)],
    groups: [...new Set(parsed.data.groups.map(normalizeIdentity))],
    createdAt: now,
  };
  await store.put(record, hashToken(token));
  return { token, record };
}

/** Revokes by id, failing with not_found when there is no such token. */
export async function revokeToken(
  store: TokenStore,
  id: string,
  now = Date.now(),
): Promise<TokenRecord> {
  const revoked = await store.revoke(id, now);
  if (!revoked) throw new NotFoundError("token", id);
  return revoked;
}

/** A record's copy that shares nothing with it (cheaper than structuredClone, which took 2.5 % of
 * a loaded server's time when every request's token lookup made one). */
function copyRecord(r: TokenRecord): TokenRecord {
  return { ...r, roles: [...r.roles], groups: [...r.groups] };
}

/** Tokens kept in this process only: for tests and for embedding a server in another program. */
export function memoryTokenStore(): TokenStore {
  const byId = new Map<string, { record: TokenRecord; hash: string }>();
  const idByHash = new Map<string, string>();
  return {
    kind: "memory",
    async migrate() {},
    async put(record, hash) {
      const previous = byId.get(record.id);
      if (previous) idByHash.delete(previous.hash);
      byId.set(record.id, { record: copyRecord(record), hash });
      idByHash.set(hash, record.id);
    },
    async findByHash(hash) {
      const id = idByHash.get(hash);
      const entry = id === undefined ? undefined : byId.get(id);
      if (!entry || entry.record.revokedAt !== undefined) return undefined;
      return copyRecord(entry.record);
    },
    async list() {
      return [...byId.values()].map((e) => copyRecord(e.record));
    },
    async revoke(id, at) {
      const entry = byId.get(id);
      if (!entry) return undefined;
      entry.record.revokedAt ??= at;
      return copyRecord(entry.record);
    },
    async close() {},
  };
}
