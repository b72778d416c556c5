// What a decision button or link says, decided once for every door (inbox, card, Slack, mail,
// console). The door's own verb always comes first; an agent's label (`labels.approve`/`reject`,
// hitlTool's `approveLabel`/`rejectLabel`) may follow it, `Approve — Send it`, but is never shown
// alone, and is dropped entirely when it would invert or muddle the verb: a "No, stop" on the approve
// button, a "Yes, proceed" on the reject one, a "Revise" on either; a label holding a web address is
// not shown either.
//
// The label is read the way a reviewer reads it, not as its code points: NFKC (fullwidth letters,
// ligatures), zero-width and bidi characters removed, accents stripped, Cyrillic/Greek look-alikes
// and digits standing in for letters (`St0p`) read as Latin letters, letters spelt out one by one
// (`S T O P`, `N.O`) joined, and a few emoji read as the yes or no they mean.
import { presentationOf } from "./presentation.js";
import { clip } from "./text.js";

export type DoorVerb = "approve" | "reject" | "revise";

/** The verbs every door shows first. */
export const VERBS: Readonly<Record<DoorVerb, string>> = {
  approve: "Approve",
  reject: "Reject",
  revise: "Revise",
};

/** The most of an agent's label a button shows. */
export const MAX_LABEL_CHARS = 60;

// --- the words ---------------------------------------------------------------------------------------
// Compared with each word of the folded label. Short words only whole (`no` but not `notes`, `go` but
// not `google`); stems also with any ending (`cancel` → cancelled, cancellation).

/** Words that refuse, stop or negate. */
const REFUSING_WORDS = new Set([
  "no",
  "nope",
  "nah",
  "not",
  "never",
  "none",
  "nothing",
  "dont",
  "doesnt",
  "didnt",
  "wont",
  "cant",
  "cannot",
  "shouldnt",
  "mustnt",
  "isnt",
  "arent",
  "aint",
  "deny",
  "denied",
  "denies",
  "denial",
  "wait",
  "nix",
  // the same in a few languages agents are known to answer in
  "nein",
  "non",
  "nee",
  "niet",
  "нет",
  "nicht",
]);
const REFUSING_STEMS = [
  "stop",
  "cancel",
  "abort",
  "reject",
  "declin",
  "refus",
  "halt",
  "block",
  "skip",
  "veto",
  "disallow",
  "forbid",
  "abandon",
  "discard",
  "prevent",
  "revok",
  "dismiss",
];

/** Words that agree, go ahead or carry the action out. */
const AFFIRMING_WORDS = new Set([
  "yes",
  "yeah",
  "yea",
  "yep",
  "yup",
  "ya",
  "aye",
  "sure",
  "ok",
  "okay",
  "okey",
  "okie",
  "kk",
  "alright",
  "affirmative",
  "go",
  "send",
  "sends",
  "sending",
  "sent",
  "pay",
  "pays",
  "paying",
  "paid",
  "payment",
  "payments",
  "run",
  "runs",
  "running",
  "sign",
  "signs",
  "signed",
  "signing",
  "ship",
  "merge",
  "commit",
  "oui",
  "si",
  "ja",
  "да",
]);
const AFFIRMING_STEMS = [
  "proceed",
  "confirm",
  "approv",
  "accept",
  "allow",
  "continu",
  "agree",
  "authori",
  "permit",
  "grant",
  "execut",
  "submit",
  "deploy",
  "publish",
  "launch",
];
/** Two words that agree together: `do it`, `go ahead`. */
const AFFIRMING_PAIRS = new Set(["do it", "go ahead", "lets go", "make it so"]);

/** Words of the third verb: on an approve or a reject button they muddle it. */
const REVISING_STEMS = ["revis", "rework", "redo", "amend"];

const REFUSING_EMOJI = /[\u{1F6D1}\u26D4\u{1F6AB}\u274C\u274E\u2716\u2717\u2718\u{1F44E}\u270B]/gu;
const AFFIRMING_EMOJI = /[\u2705\u2714\u2713\u{1F44D}\u{1F44C}\u{1F197}\u{1F680}\u2611]/gu;

/** Cyrillic and Greek letters drawn like Latin ones (lower case). */
const LOOK_ALIKES: Record<string, string> = {
  а: "a",
  в: "b",
  е: "e",
  ё: "e",
  к: "k",
  м: "m",
  н: "h",
  о: "o",
  р: "p",
  с: "c",
  т: "t",
  у: "y",
  х: "x",
  і: "i",
  ї: "i",
  ј: "j",
  ѕ: "s",
  ԁ: "d",
  ԛ: "q",
  ԝ: "w",
  ɡ: "g",
  α: "a",
  β: "b",
  ε: "e",
  ι: "i",
  κ: "k",
  ν: "v",
  ο: "o",
  ρ: "p",
  τ: "t",
  υ: "u",
  χ: "x",
};
const LOOK_ALIKE = new RegExp(`[${Object.keys(LOOK_ALIKES).join("")}]`, "gu");
const LEET: Record<string, string> = { "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t" };

// --- reading a label -----------------------------------------------------------------------------

/** A label as a button shows it: one line, NFKC, without invisible characters, at most
 * MAX_LABEL_CHARS; undefined when nothing visible is left. */
export function cleanLabel(custom: string | undefined): string | undefined {
  if (typeof custom !== "string") return undefined;
  const text = custom
    .normalize("NFKC")
    .replace(/[\p{Cf}]/gu, "")
    .replace(/[\p{Cc}\p{Zl}\p{Zp}\s]+/gu, " ")
    .trim();
  return text === "" ? undefined : clip(text, MAX_LABEL_CHARS);
}

/** The label's clauses (split at punctuation), each a list of folded words with their variants. */
function clausesOf(label: string): string[][][] {
  const folded = label
    .normalize("NFKC")
    .replace(/\p{Cf}/gu, "")
    .replace(REFUSING_EMOJI, " , no , ")
    .replace(AFFIRMING_EMOJI, " , yes , ")
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc\u02b9\u0060\u00b4\u2032]/g, "'")
    .replace(/n't\b/g, " not")
    .replace(/'/g, "");
  const clauses = folded.split(/[^\p{L}\p{N}\s]+/u).map((c) => c.split(/\s+/).filter(Boolean));
  // Letters spelt out one by one, across spaces and punctuation (`S T O P`, `N.O`): joined, and the
  // word counted in the clause where it starts.
  const flat = clauses.flatMap((words, c) => words.map((w) => ({ w, c })));
  const extra: { w: string; c: number }[] = [];
  for (let i = 0; i < flat.length; ) {
    let j = i;
    while (j < flat.length && flat[j]?.w.length === 1) j++;
    if (j - i >= 2)
      extra.push({
        w: flat
          .slice(i, j)
          .map((x) => x.w)
          .join(""),
        c: flat[i]?.c ?? 0,
      });
    i = Math.max(j, i + 1);
  }
  for (const { w, c } of extra) clauses[c]?.push(w);
  return clauses.map((words) => words.map(variants));
}

/** A word as written, with look-alike letters as Latin, and digits standing for letters as letters. */
function variants(word: string): string[] {
  const latin = word.replace(LOOK_ALIKE, (ch) => LOOK_ALIKES[ch] ?? ch);
  const out = new Set([word, latin]);
  if (/\p{L}/u.test(latin) && /[0-9]/.test(latin)) {
    out.add(latin.replace(/[013457]/g, (d) => LEET[d] ?? d));
    out.add(latin.replace(/1/g, "l").replace(/[03457]/g, (d) => LEET[d] ?? d));
  }
  return [...out];
}

const matches = (forms: string[], words: Set<string>, stems: readonly string[]) =>
  forms.some((f) => words.has(f) || stems.some((s) => f.startsWith(s)));

const refusing = (forms: string[]) => matches(forms, REFUSING_WORDS, REFUSING_STEMS);
const revising = (forms: string[]) => matches(forms, new Set(), REVISING_STEMS);

/** The words of a clause that agree and are not negated by a refusing word before them in the same
 * clause (`Don't pay`, `Cancel the payment`, `Not OK` refuse; `No, send it` does not). */
function affirmsUnnegated(clause: string[][]): boolean {
  let negated = false;
  for (let i = 0; i < clause.length; i++) {
    const forms = clause[i] as string[];
    if (refusing(forms)) {
      negated = true;
      continue;
    }
    const next = clause[i + 1] ?? [];
    const pair = forms.some((a) => next.some((b) => AFFIRMING_PAIRS.has(`${a} ${b}`)));
    if ((pair || matches(forms, AFFIRMING_WORDS, AFFIRMING_STEMS)) && !negated) return true;
  }
  return false;
}

/** Whether an agent's label would invert or muddle `verb` on its button: any refusing word on the
 * approve button (a double negative is no clearer); a yes or a go-ahead not negated in its own
 * clause on the reject button; either, or revising words, on the revise button; revising words on
 * the approve and reject buttons. */
export function labelInverts(verb: DoorVerb, custom: string): boolean {
  const clauses = clausesOf(custom);
  const words = clauses.flat();
  switch (verb) {
    case "approve":
      return words.some((f) => refusing(f) || revising(f));
    case "reject":
      return words.some(revising) || clauses.some(affirmsUnnegated);
    case "revise":
      return words.some((f) => refusing(f) || matches(f, AFFIRMING_WORDS, AFFIRMING_STEMS));
  }
}

/** A web address in a label would sit beside a mail's real links, looking like one of them. */
const LINK = /[a-z][a-z0-9+.-]*:\/\/|\bwww\./i;

/** The text of a decision button or link: `verbText` (the door's own words for `verb`, "Approve" by
 * default, or e.g. "Approve all 3"; never an agent's) first, then the agent's label when it adds
 * something and neither inverts nor muddles the verb: `Approve — Send it`. */
export function buttonLabel(
  verb: DoorVerb,
  custom?: string,
  verbText: string = VERBS[verb],
): string {
  const label = cleanLabel(custom);
  if (label === undefined || labelInverts(verb, custom ?? "") || LINK.test(label)) return verbText;
  const same = (a: string) => a.toLowerCase().replace(/\s+/g, " ").trim();
  if (same(label) === same(verbText) || same(label) === same(VERBS[verb])) return verbText;
  return `${verbText} — ${label}`;
}

export interface DoorLabels {
  approve: string;
  reject: string;
  revise: string;
}

/** The three buttons of a request as every door labels them. */
export function doorLabels(request: Parameters<typeof presentationOf>[0]): DoorLabels {
  const { labels } = presentationOf(request);
  return {
    approve: buttonLabel("approve", labels.approve),
    reject: buttonLabel("reject", labels.reject),
    revise: VERBS.revise,
  };
}
