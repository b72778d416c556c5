// The one label rule (src/core/labels.ts): the verb first, an agent's label after it only when it
// neither inverts nor muddles the verb, folded the way a reviewer reads it. The pairs first,
// then the disguises an agent could try, then labels that must keep showing.
import { describe, expect, it } from "vitest";
import {
  buttonLabel,
  cleanLabel,
  type DoorVerb,
  doorLabels,
  labelInverts,
} from "../../src/core/labels.js";

/** [button, agent's label, what the button reads] */
const CASES: [DoorVerb, string, string][] = [
  // the issue: labels that inverted the card's buttons
  ["approve", "No, stop", "Approve"],
  ["reject", "Yes, proceed", "Reject"],
  ["approve", "Cancel the transfer", "Approve"],
  ["reject", "Send it", "Reject"],
  ["approve", "Don't pay", "Approve"],
  ["reject", "Confirm payment", "Reject"],
  // ... and the same labels on the button they belong to
  ["approve", "Yes, proceed", "Approve — Yes, proceed"],
  ["reject", "No, stop", "Reject — No, stop"],
  ["approve", "Send it", "Approve — Send it"],
  ["reject", "Cancel the transfer", "Reject — Cancel the transfer"],
  ["approve", "Confirm payment", "Approve — Confirm payment"],
  ["reject", "Don't pay", "Reject — Don't pay"],
  // negations and stop words on the approve button
  ["approve", "Do not deploy", "Approve"],
  ["approve", "STOP", "Approve"],
  ["approve", "abort mission", "Approve"],
  ["approve", "Reject", "Approve"],
  ["approve", "Deny access", "Approve"],
  ["approve", "Decline offer", "Approve"],
  ["approve", "Refuse", "Approve"],
  ["approve", "Halt the pipeline", "Approve"],
  ["approve", "Never", "Approve"],
  ["approve", "Nope", "Approve"],
  ["approve", "Cancelled", "Approve"],
  ["approve", "Dont send", "Approve"],
  ["approve", "I can't allow this", "Approve"],
  ["approve", "Don't stop", "Approve"], // a double negative is no clearer
  ["approve", "Revise the plan", "Approve"], // the third verb muddles it
  // affirmations on the reject button
  ["reject", "Yes", "Reject"],
  ["reject", "OK", "Reject"],
  ["reject", "okay!", "Reject"],
  ["reject", "Go ahead", "Reject"],
  ["reject", "Continue", "Reject"],
  ["reject", "Accept", "Reject"],
  ["reject", "Allow it", "Reject"],
  ["reject", "Approve", "Reject"],
  ["reject", "Pay now", "Reject"],
  ["reject", "Do it", "Reject"],
  ["reject", "No, send it", "Reject"], // "send" is not negated in its own clause
  ["reject", "Sure", "Reject"],
  ["reject", "Proceed anyway", "Reject"],
  // disguises: case, punctuation, emoji, fullwidth, zero-width, look-alikes, spelling out, digits
  ["approve", "no!!!", "Approve"],
  ["approve", "ＮＯ，ＳＴＯＰ", "Approve"],
  ["reject", "ＹＥＳ", "Reject"],
  ["approve", "N\u200bo", "Approve"],
  ["approve", "S\u200dT\u2060O\uFEFFP", "Approve"],
  ["approve", "\u202eots\u202c stop", "Approve"],
  ["approve", "Don\u2019t pay", "Approve"],
  ["approve", "S T O P", "Approve"],
  ["approve", "N.O", "Approve"],
  ["approve", "St0p", "Approve"],
  ["approve", "\u0455t\u043e\u0440", "Approve"], // Cyrillic ѕ, о, р
  ["reject", "y\u0435s", "Reject"], // Cyrillic е
  ["approve", "🛑", "Approve"],
  ["approve", "❌ nah", "Approve"],
  ["reject", "👍", "Reject"],
  ["reject", "✅ Sí", "Reject"],
  ["approve", "Nö, stöp", "Approve"],
  ["approve", "нет", "Approve"],
  ["reject", "0K", "Reject"],
  // labels that rename and keep showing after the verb
  ["approve", "Sign", "Approve — Sign"],
  ["reject", "Keep unsigned", "Reject — Keep unsigned"],
  ["approve", "Run them", "Approve — Run them"],
  ["reject", "Stop here", "Reject — Stop here"],
  ["approve", "Delete", "Approve — Delete"],
  ["approve", "Notify the team", "Approve — Notify the team"],
  ["approve", "Publish notes", "Approve — Publish notes"],
  ["reject", "Not OK", "Reject — Not OK"],
  ["reject", "Leave it as it is", "Reject — Leave it as it is"],
  ["reject", "Do not send", "Reject — Do not send"],
  // nothing to add: the verb alone
  ["approve", "approve", "Approve"],
  ["reject", "  REJECT ", "Reject"],
  ["approve", "", "Approve"],
  ["approve", "\u200b\u200b", "Approve"],
  ["reject", "   ", "Reject"],
];

describe("buttonLabel", () => {
  it.each(CASES)("%s with %j reads %j", (verb, custom, shown) => {
    expect(buttonLabel(verb, custom)).toBe(shown);
    expect(labelInverts(verb, custom)).toBe(
      shown === buttonLabel(verb) && cleanLabel(custom) !== undefined && !sameAsVerb(verb, custom),
    );
  });

  it("always starts with the verb, whatever the label", () => {
    for (const [verb, custom] of CASES) {
      expect(buttonLabel(verb, custom).startsWith(verb === "approve" ? "Approve" : "Reject")).toBe(
        true,
      );
    }
  });

  it("takes the door's own words for the verb, never the agent's", () => {
    expect(buttonLabel("approve", "Run them", "Approve all 3")).toBe("Approve all 3 — Run them");
    expect(buttonLabel("approve", "No", "Approve all 3")).toBe("Approve all 3");
    expect(buttonLabel("reject", "Don't pay", "Skip (approve none)")).toBe(
      "Skip (approve none) — Don't pay",
    );
  });

  it("shows a label on one line, without invisible characters, at most 60 characters", () => {
    expect(buttonLabel("approve", "Send\nit\u200b now")).toBe("Approve — Send it now");
    const long = buttonLabel("approve", "x".repeat(200));
    expect(long).toBe(`Approve — ${"x".repeat(59)}…`);
    // A refusal past what is shown still hides the label.
    expect(buttonLabel("approve", `${"Send it ".repeat(10)} no`)).toBe("Approve");
  });

  it("shows no web address: beside a mail's links it would pass for one", () => {
    expect(buttonLabel("approve", "Send it: https://evil.example/approve")).toBe("Approve");
    expect(buttonLabel("reject", "see www.evil.example")).toBe("Reject");
  });

  it("the revise button takes no yes and no no", () => {
    expect(buttonLabel("revise", "Ask for changes")).toBe("Revise — Ask for changes");
    expect(buttonLabel("revise", "Approve with changes")).toBe("Revise");
    expect(buttonLabel("revise", "Stop")).toBe("Revise");
  });
});

describe("doorLabels", () => {
  it("reads typed labels and the metadata keys of older requests alike", () => {
    expect(
      doorLabels({ labels: { approve: "No, stop", reject: "Yes, proceed" }, metadata: {} }),
    ).toEqual({
      approve: "Approve",
      reject: "Reject",
      revise: "Revise",
    });
    expect(
      doorLabels({ metadata: { approveLabel: "Sign", hitl: { rejectLabel: "Keep unsigned" } } }),
    ).toEqual({ approve: "Approve — Sign", reject: "Reject — Keep unsigned", revise: "Revise" });
    expect(doorLabels({ metadata: { approveLabel: "Don't pay" } }).approve).toBe("Approve");
  });
});

function sameAsVerb(verb: DoorVerb, custom: string): boolean {
  return custom.trim().toLowerCase() === verb;
}
