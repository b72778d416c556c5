// The people of a channels config: two entries sharing a Slack user id, an email address (in any
// case) or a name (once normalised) would let one decide as the other, so the config is refused.
import { describe, expect, it } from "vitest";
import { parseChannelsConfig } from "../../src/channels/config.js";
import { createIdentityDirectory, identityClashes } from "../../src/channels/identities.js";

describe("identities", () => {
  it("refuses a config where two people share a Slack id, an email address or a name", () => {
    const clashes: Record<string, Record<string, unknown>>[] = [
      { alice: { slack: "U1" }, mallory: { slack: "U1" } },
      { alice: { email: "a@x.com" }, mallory: { email: "A@X.com" } },
      { alice: {}, Alice: {} },
    ];
    for (const identities of clashes) {
      expect(() => parseChannelsConfig({ identities }), JSON.stringify(identities)).toThrow(
        /identities\.(mallory|Alice): `(mallory|Alice)` has .* of `alice`: each person needs their own/,
      );
      expect(() =>
        createIdentityDirectory(
          Object.fromEntries(Object.entries(identities).map(([k, v]) => [k, { groups: [], ...v }])),
        ),
      ).toThrow(/identities: /);
    }
  });

  it("accepts distinct people and finds each by their own ids", () => {
    const people = {
      alice: { slack: "U1", email: "a@x.com", groups: ["ops"] },
      bob: { slack: "U2", email: "b@x.com", groups: [] },
    };
    expect(identityClashes(people)).toEqual([]);
    const dir = createIdentityDirectory(people);
    expect(dir.bySlackUser("U1")?.name).toBe("alice");
    expect(dir.byEmail("B@X.com")?.name).toBe("bob");
    expect(parseChannelsConfig({ identities: people }).identities).toMatchObject(people);
  });

  it("refuses a person or group whose name mixes scripts, and a fullwidth twin of a name", () => {
    expect(() => parseChannelsConfig({ identities: { "\u0430lice": {} } })).toThrow(
      /identities\.\u0430lice: `\u0430lice` mixes scripts \(`\u0430` is Cyrillic, `l` is Latin\)/,
    );
    expect(() => parseChannelsConfig({ identities: { bob: { groups: ["\u043eps"] } } })).toThrow(
      /identities\.bob\.groups\.0: `\u043eps` mixes scripts/,
    );
    expect(() => parseChannelsConfig({ identities: { alice: {}, ＡＬＩＣＥ: {} } })).toThrow(
      /`ＡＬＩＣＥ` has the name of `alice`/,
    );
  });
});
