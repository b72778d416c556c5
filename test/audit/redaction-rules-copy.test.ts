// The Python client ships its own copy of the redaction rules (a package cannot read a file outside
// itself): it must be the server's file byte for byte.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url);

describe("the redaction rules", () => {
  it("are the same file in the server and in the Python client", () => {
    const server = readFileSync(new URL("src/audit/redaction-rules.json", root), "utf8");
    const python = readFileSync(
      new URL("clients/python/src/airlock_client/redaction_rules.json", root),
      "utf8",
    );
    // On a difference: copy src/audit/redaction-rules.json over the Python client's copy.
    expect(python).toBe(server);
  });
});
