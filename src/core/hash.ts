import * as crypto from "node:crypto";
import { createHash } from "node:crypto";

/** JSON with object keys sorted at every depth, so equal values always hash alike. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  // As JSON.stringify does (a Date becomes its ISO string, a URL its href): without this every Date
  // would hash like `{}`, so an approval of one date would pass for any other.
  if (
    value !== null &&
    typeof value === "object" &&
    typeof (value as { toJSON?: unknown }).toJSON === "function"
  ) {
    value = (value as { toJSON(): unknown }).toJSON();
  }
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v === undefined) continue;
      // An own "__proto__" key (JSON.parse makes one) is data: assigned, it would set the prototype
      // and vanish from the text, so two different values would hash alike.
      if (k === "__proto__") {
        Object.defineProperty(out, k, {
          value: sortKeys(v),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else out[k] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/** A JSON object as a store kept it (audit data, an outbox payload): the object, or
 * `{ unparsable: text }` when the text is not one. A row edited by hand may hold broken JSON: it stays
 * visible, and verification reports it as altered, instead of failing the whole read. */
export function parseStoredObject(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : { unparsable: text };
  } catch {
    return { unparsable: text };
  }
}

export function sha256(text: string): string {
  return sha256OneShot.hex(text);
}

type OneShotHash = {
  (algorithm: string, data: string | Buffer): string;
  (algorithm: string, data: string | Buffer, encoding: "buffer"): Buffer;
};

/** SHA-256 as hex or bytes: `crypto.hash` where Node has it (one call, no Hash object: faster for
 * the short texts hashed per event), else a Hash. */
export const sha256OneShot: { hex(data: string | Buffer): string; bytes(data: Buffer): Buffer } =
  (() => {
    const hash = (crypto as { hash?: OneShotHash }).hash;
    if (hash) {
      return {
        hex: (data) => hash("sha256", data),
        bytes: (data) => hash("sha256", data, "buffer"),
      };
    }
    return {
      hex: (data) => createHash("sha256").update(data).digest("hex"),
      bytes: (data) => createHash("sha256").update(data).digest(),
    };
  })();

/** The hash that binds an approval to exactly these arguments. */
export function hashArgs(args: unknown): string {
  return sha256(canonicalJson(args ?? {}));
}
