// One person, one identity, however their name is typed: NFKC (the fullwidth `ＡＬＩＣＥ` is `alice`),
// invisible characters dropped (`ali\u200Bce` is `alice`), and names that mix scripts (`аlice` with a
// Cyrillic `а`) refused wherever a name enters, on SQLite and on PostgreSQL.
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { identityProblem, normalizeIdentity, sameIdentity } from "../../src/core/identity.js";
import { newRequest } from "../../src/core/new-request.js";
import { requestInputSchema } from "../../src/core/schemas.js";
import type { Store } from "../../src/core/store.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { createToken, memoryTokenStore } from "../../src/server/tokens.js";
import { postgresStore } from "../../src/store/postgres.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import { describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";
import { startOwnServer } from "../server/own-server.js";

/** The normal form before NFKC: what rows stored by earlier versions hold. */
function oldNormalForm(name: string): string {
  return name.normalize("NFC").trim().replace(/\s+/g, " ").toLowerCase();
}

/** A name with a Cyrillic `а` (U+0430) where a Latin `a` would be. */
const CYRILLIC_ALICE = "\u0430lice";

describe("normalizeIdentity", () => {
  it("folds compatibility forms and drops default-ignorable code points", () => {
    const variants = [
      "ＡＬＩＣＥ", // fullwidth
      "ali\u200Bce", // zero-width space
      "al\u200Dice", // zero-width joiner
      "al\u200Cice", // zero-width non-joiner
      "ali\u00ADce", // soft hyphen
      "\uFEFFalice", // byte order mark
      "alice\uFE0F", // variation selector 16
      "a\u2060lice", // word joiner
      " Alice ",
    ];
    for (const v of variants) {
      expect(normalizeIdentity(v), JSON.stringify(v)).toBe("alice");
      expect(sameIdentity(v, "alice"), JSON.stringify(v)).toBe(true);
    }
    expect(normalizeIdentity("ﬁona")).toBe("fiona");
    expect(sameIdentity(CYRILLIC_ALICE, "alice")).toBe(false);
  });

  it("is idempotent", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 30 }), (s) => {
        const once = normalizeIdentity(s);
        expect(normalizeIdentity(once)).toBe(once);
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps the old normal form of lower-case ASCII and of NFC names without compatibility characters, so stored rows still match", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9 ._@-]{1,40}$/), (s) => {
        expect(normalizeIdentity(s)).toBe(oldNormalForm(s));
      }),
    );
    for (const s of ["José", "Алиса", "山田たろう", "Ωμέγα", "straße"]) {
      expect(normalizeIdentity(s)).toBe(oldNormalForm(s));
    }
  });
});

describe("identityProblem", () => {
  it("refuses names mixing scripts and names of invisible characters only, naming the characters", () => {
    expect(identityProblem(CYRILLIC_ALICE)).toBe(
      "mixes scripts (`а` is Cyrillic, `l` is Latin); a name must be written in one script, so that letters that look alike cannot pose as another person",
    );
    expect(identityProblem("Ωmega")).toMatch(/`ω` is Greek, `m` is Latin/);
    expect(identityProblem("\u200B\u200D")).toBe("is empty once invisible characters are removed");
  });

  it("accepts names in one script, digits and punctuation included, and Han with kana or Hangul", () => {
    for (const s of [
      "alice",
      "ops-team 2",
      "build.bot@example.com",
      "José",
      "Алиса",
      "Ωμέγα",
      "山田たろう",
      "ヤマダ太郎",
      "김철수",
      "ＡＬＩＣＥ",
    ]) {
      expect(identityProblem(s), s).toBeUndefined();
    }
  });
});

describe("token creation", () => {
  it("refuses a mixed-script name or group with invalid_input naming the field", async () => {
    const tokens = memoryTokenStore();
    await expect(
      createToken(tokens, { name: CYRILLIC_ALICE, roles: ["reviewer"] }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "name" });
    await expect(
      createToken(tokens, { name: "bob", roles: ["reviewer"], groups: ["оps"] }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "groups.0" });
    const made = await createToken(tokens, { name: "ＢＯＢ\u200B", roles: ["reviewer"] });
    expect(made.record.name).toBe("bob");
  });
});

function identityRules(open: () => { store: Store; cleanup: () => Promise<void> }) {
  let engine: Airlock;
  let store: Store;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const opened = open();
    cleanup = opened.cleanup;
    store = opened.store;
    engine = await createAirlock({ store });
  });

  it("rows stored before NFKC, with names in the old normal form, still match", async () => {
    // Written as an earlier version wrote it: names in NFC, lower case.
    const input = requestInputSchema.parse({
      title: "Old gate",
      requester: "Build Bot",
      approvers: ["Alice", "José", "ﬁona"],
      quorum: 2,
    });
    const { stored, events } = newRequest(input, { level: "full" }, "old-input", Date.now());
    stored.requester = oldNormalForm(input.requester);
    stored.approvers = input.approvers.map(oldNormalForm);
    expect(stored.approvers).toEqual(["alice", "josé", "ﬁona"]);
    await store.insertRequest(stored, events);

    expect((await engine.list({ requester: "BUILD  BOT" })).items.map((r) => r.id)).toEqual([
      stored.id,
    ]);
    const forJose = await engine.listSummaries({ approver: "JOSÉ" });
    expect(forJose.items.map((r) => r.id)).toContain(stored.id);
    // Decisions compare both sides in the new normal form: the fullwidth Alice is the listed alice,
    // and fiona is the ﬁona stored with a ligature.
    await engine.decide(stored.id, { outcome: "approved", reviewer: "ＡＬＩＣＥ" });
    const done = await engine.decide(stored.id, { outcome: "approved", reviewer: "fiona" });
    expect(done.status).toBe("approved");
    expect(done.decisions.map((d) => d.reviewer)).toEqual(["alice", "fiona"]);
  });
  afterAll(async () => {
    await engine?.close();
    await cleanup?.();
  });

  it("ＡＬＩＣＥ and alice are one approver: a quorum of 2 is not met by the two", async () => {
    const r = await engine.request({ title: "Deploy", requester: "bot", quorum: 2 });
    const first = await engine.decide(r.id, { outcome: "approved", reviewer: "alice" });
    expect(first.status).toBe("pending");
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "ＡＬＩＣＥ" }),
    ).rejects.toMatchObject({ code: "conflict" });
    const stored = await engine.get(r.id);
    expect(stored.status).toBe("pending");
    expect(stored.decisions.map((d) => d.reviewer)).toEqual(["alice"]);
  });

  it("ali\u200Bce (zero-width space) is alice: the same vote, the approver listed, never the requester's reviewer", async () => {
    const r = await engine.request({
      title: "Pay",
      requester: "ali\u200Bce",
      approvers: ["bob", "ca\u200Brol"],
      quorum: 2,
    });
    expect(r.requester).toBe("alice");
    expect(r.approvers).toEqual(["bob", "carol"]);
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "alice" }),
    ).rejects.toMatchObject({ code: "forbidden" });
    await engine.decide(r.id, { outcome: "approved", reviewer: "carol" });
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "car\u200Dol\uFE0F" }),
    ).rejects.toMatchObject({ code: "conflict" });
    expect((await engine.list({ requester: "ALI\u200BCE" })).items.map((x) => x.id)).toContain(
      r.id,
    );
  });

  it("refuses a mixed-script requester, approver, escalation approver, reviewer or group", async () => {
    const detail = /mixes scripts \(`а` is Cyrillic, `l` is Latin\)/;
    await expect(engine.request({ title: "x", requester: CYRILLIC_ALICE })).rejects.toMatchObject({
      code: "invalid_input",
      field: "requester",
      message: detail,
    });
    await expect(
      engine.request({ title: "x", requester: "bot", approvers: ["bob", CYRILLIC_ALICE] }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "approvers.1", message: detail });
    await expect(
      engine.request({
        title: "x",
        requester: "bot",
        timeoutMs: 1000,
        onTimeout: { escalate: { approvers: [CYRILLIC_ALICE], timeoutMs: 1000 } },
      }),
    ).rejects.toMatchObject({ code: "invalid_input", message: detail });
    const r = await engine.request({ title: "y", requester: "bot" });
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: CYRILLIC_ALICE }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "reviewer", message: detail });
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "bob", groups: ["оps"] }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "groups.0" });
    expect((await engine.get(r.id)).decisions).toEqual([]);
  });
}

describe("identities on SQLite", () => {
  identityRules(() => {
    const t = tempDir("airlock-identity-");
    return {
      store: sqliteStore(`${t.dir}/airlock.db`),
      cleanup: async () => t.cleanup(),
    };
  });
});

await describePg("identities on PostgreSQL", ({ url }) => {
  identityRules(() => {
    const schema = freshSchema("airlock_identity");
    return {
      store: postgresStore(url, { schema, max: 2 }),
      cleanup: () => dropSchema(url, schema),
    };
  });
});

describe("names over HTTP", () => {
  let s: Awaited<ReturnType<typeof startOwnServer>>;
  beforeAll(async () => {
    s = await startOwnServer({ bot: { roles: ["agent"] }, root: { roles: ["admin"] } });
  });
  afterEach(() => undefined);
  afterAll(async () => {
    await s?.close();
  });

  it("a mixed-script name is a 422 problem with a clear detail at token and request creation", async () => {
    const token = await s.call(s.tokens.root, "POST", "/v1/tokens", {
      name: CYRILLIC_ALICE,
      roles: ["reviewer"],
    });
    expect(token.status).toBe(422);
    expect(token.headers.get("content-type")).toContain("application/problem+json");
    expect(token.body.detail).toContain("mixes scripts (`а` is Cyrillic, `l` is Latin)");

    const request = await s.call(s.tokens.bot, "POST", "/v1/requests", {
      title: "Deploy",
      approvers: ["ops", CYRILLIC_ALICE],
    });
    expect(request.status).toBe(422);
    expect(request.headers.get("content-type")).toContain("application/problem+json");
    expect(request.body.detail).toMatch(/`approvers\.1`: `аlice` mixes scripts/);
  });
});
