// src/tools/args-schema.ts: a tool's schema as the JSON Schema a request carries, and as the parser
// of the approved args (the message a person reads when they do not fit).
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { MAX_ARGS_SCHEMA_BYTES } from "../../src/core/args-schema.js";
import { isStandardSchema, parseToolArgs, toArgsSchema } from "../../src/tools/args-schema.js";

const pay = z.object({ amountCents: z.number().int().positive(), payee: z.string() });

describe("toArgsSchema", () => {
  it("reads zod 4 (its input side), a Standard JSON Schema and a plain JSON Schema", () => {
    expect(toArgsSchema(pay)).toEqual({ schema: z.toJSONSchema(pay, { io: "input" }) });
    const withDefault = z.object({ currency: z.string().default("EUR") });
    const out = toArgsSchema(withDefault);
    expect("schema" in out && out.schema.required).toBeUndefined();
    const json = { type: "object", properties: { a: { type: "string" } } };
    expect(toArgsSchema(json)).toEqual({ schema: json });
  });

  it("says why a schema cannot be carried", () => {
    expect(toArgsSchema(() => 1)).toMatchObject({ skipped: expect.stringContaining("neither") });
    expect(toArgsSchema({ _def: { typeName: "ZodObject" } })).toMatchObject({
      skipped: expect.stringContaining("neither"),
    });
    expect(toArgsSchema({ type: "no-such-type" })).toMatchObject({
      skipped: expect.stringContaining("Airlock cannot check arguments against"),
    });
    const big = { type: "object", description: "x".repeat(MAX_ARGS_SCHEMA_BYTES) };
    expect(toArgsSchema(big)).toMatchObject({
      skipped: expect.stringContaining("bytes, over the"),
    });
    expect(JSON.stringify(toArgsSchema({ type: "no-such-type" }))).not.toContain("`");
  });
});

describe("parseToolArgs", () => {
  it("parses with a Standard Schema, typed by it, and words a misfit as the engine does", async () => {
    expect(isStandardSchema(pay)).toBe(true);
    expect(await parseToolArgs(pay, { amountCents: 5, payee: "A", extra: 1 })).toEqual({
      ok: true,
      value: { amountCents: 5, payee: "A" },
    });
    const carried = z.toJSONSchema(pay, { io: "input" });
    expect(await parseToolArgs(pay, { amountCents: "lots", payee: "A" }, carried)).toEqual({
      ok: false,
      detail: 'amountCents: expected a number, got the text "lots"',
    });
    // Without the carried JSON Schema: the validator's own words, without backticks.
    const own = await parseToolArgs(pay, { amountCents: "lots", payee: "A" });
    expect(own.ok).toBe(false);
    expect(!own.ok && own.detail).toMatch(/^amountCents: /);
  });

  it("parses with a JSON Schema, and refuses a validator it cannot read", async () => {
    const json = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
    expect(await parseToolArgs(json, { n: 2 })).toEqual({ ok: true, value: { n: 2 } });
    expect(await parseToolArgs(json, {})).toEqual({
      ok: false,
      detail: "n: expected a number, got nothing",
    });
    class OldZod {
      _def = { typeName: "ZodObject" };
    }
    await expect(parseToolArgs(new OldZod() as never, {})).rejects.toMatchObject({
      code: "invalid_input",
      field: "schema",
    });
  });
});
