// The offline planner: deterministic rules over words, no network and no model. It is what runs unless
// AIRLOCK_LLM_URL is set. Good enough to drive the examples end to end, and easy to predict in tests.
import { keywords, sentences, termHits } from "../shared/text.js";
import {
  type Critique,
  type Finding,
  type IntentInput,
  type PlanInput,
  type Planner,
  PlannerError,
  type Reflection,
  type ReflectionInput,
  type ResearchPlan,
  type RobotIntent,
  type SynthesisInput,
} from "./types.js";

/** Findings below this confidence get a critique and a recommended query. */
export const LOW_CONFIDENCE = 0.6;
/** ... and below this one the critique is of high importance. */
export const VERY_LOW_CONFIDENCE = 0.45;

export function ruleBasedPlanner(): Planner {
  return {
    name: "rule-based",
    planResearch: async (input) => planResearch(input),
    reflect: async (input) => reflect(input),
    parseIntent: async (input) => parseIntent(input),
    synthesize: async (input) => synthesize(input),
  };
}

// ---- research planning -------------------------------------------------------------------------

const AUDIENCE_QUESTION = "Who will read the report, and which decision should it inform?";

export function planResearch({ query, maxQueries, clarifications = [] }: PlanInput): ResearchPlan {
  const { sides, core, ...plan } = basePlan(query);
  if (clarifications.length === 0) {
    return { ...plan, expandedQueries: plan.expandedQueries.slice(0, Math.max(1, maxQueries)) };
  }
  // The reviewer's answers: a query focused on what they said matters comes first, and the questions
  // they answered are not asked again.
  const known = new Set(keywords(plan.expandedQueries.join(" ")));
  const focus = answerTerms(clarifications)
    .filter((t) => !known.has(t))
    .slice(0, 4);
  const answered = new Set(clarifications.map((c) => c.question));
  const subject = sides ? `${sides[0]} ${sides[1]}` : core;
  return {
    clarifyingQuestions: plan.clarifyingQuestions.filter((q) => !answered.has(q)),
    expandedQueries: [
      ...(focus.length ? [`${subject} ${focus.join(" ")}`] : []),
      ...plan.expandedQueries,
    ].slice(0, Math.max(1, maxQueries)),
    outline: plan.outline,
  };
}

/** The words of the reviewer's answers that can steer a search or a section. */
export function answerTerms(clarifications: readonly { answer: string }[]): string[] {
  return [...new Set(keywords(clarifications.map((c) => c.answer).join(" ")))];
}

function basePlan(query: string): ResearchPlan & { sides?: [string, string]; core: string } {
  const sides = comparisonSides(query);
  if (sides) {
    const [a, b] = sides;
    const context = keywords(query)
      .filter((t) => t !== a.toLowerCase() && t !== b.toLowerCase())
      .slice(0, 3)
      .join(" ");
    return {
      sides,
      core: `${a} ${b}`,
      clarifyingQuestions: [
        `Which criteria matter most when choosing between ${a} and ${b}: cost, reliability, performance or operations?`,
        "What scale do you expect (users, writes per second, data size)?",
        AUDIENCE_QUESTION,
      ],
      expandedQueries: [
        `${a} advantages`,
        `${b} advantages`,
        `${a} limitations`,
        `${b} limitations`,
        `${a} ${b} ${context}`.trim(),
      ],
      outline: ["Overview", a, b, "Trade-offs", "Recommendation"],
    };
  }
  const core = keywords(query).slice(0, 5).join(" ") || query.trim();
  return {
    core,
    clarifyingQuestions: [
      `Which aspect of "${core}" matters most to you?`,
      "Is there a region or a timeframe the research should focus on?",
      AUDIENCE_QUESTION,
    ],
    expandedQueries: ["overview", "benefits", "limitations", "costs", "evidence"].map(
      (facet) => `${core} ${facet}`,
    ),
    outline: ["Overview", "Benefits", "Limitations", "Costs", "Conclusion"],
  };
}

/** "Should we use SQLite or PostgreSQL for X?" gives ["SQLite", "PostgreSQL"]. */
export function comparisonSides(query: string): [string, string] | undefined {
  const m = /^(.*?)\s+(?:or|vs\.?|versus)\s+(.*)$/i.exec(query.trim());
  if (!m) return undefined;
  const left = words(m[1] ?? "").filter(meaningful);
  const right = words(m[2] ?? "").filter(meaningful);
  const a = left[left.length - 1];
  const b = right[0];
  return a && b ? [a, b] : undefined;
}

function words(text: string): string[] {
  return text.split(/[\s,;:?!()]+/).filter((w) => w !== "");
}

function meaningful(word: string): boolean {
  return keywords(word).length > 0;
}

// ---- reflection --------------------------------------------------------------------------------

export function reflect({ findings, maxQueries }: ReflectionInput): Reflection {
  const critique: Critique[] = [];
  const additionalQuestions: string[] = [];
  const recommendedQueries: string[] = [];
  const weakest = [...findings].sort((x, y) => x.confidence - y.confidence);
  for (const f of weakest) {
    if (f.confidence >= LOW_CONFIDENCE) continue;
    critique.push({
      issue: `Weak evidence for "${f.question}" (confidence ${f.confidence.toFixed(2)}, ${sourcesText(f)})`,
      importance: f.confidence < VERY_LOW_CONFIDENCE ? "high" : "medium",
    });
    additionalQuestions.push(`What do independent sources report on "${f.question}"?`);
    recommendedQueries.push(`${keywords(f.question).join(" ")} measured data`);
  }
  const distinct = new Set(findings.flatMap((f) => f.sources)).size;
  if (findings.length > 0 && distinct < 3) {
    critique.push({
      issue: `The findings rest on only ${distinct} distinct source${distinct === 1 ? "" : "s"}`,
      importance: "medium",
    });
  }
  if (critique.length === 0) {
    critique.push({ issue: "The findings agree and are well sourced", importance: "low" });
  }
  return {
    critique,
    additionalQuestions,
    recommendedQueries: recommendedQueries.slice(0, Math.max(0, maxQueries)),
  };
}

function sourcesText(f: Finding): string {
  return f.sources.length === 1 ? "1 source" : `${f.sources.length} sources`;
}

// ---- robot intent ------------------------------------------------------------------------------

const NUMBERS = String.raw`((?:\d+|\s|,|&|-|\band\b)+)`;
const POSITION_WORD = String.raw`(?:\s+(?:positions?|pos\.?))?`;

export function parseIntent({ command, feedback, knownPositions }: IntentInput): RobotIntent {
  const text = command.toLowerCase();
  let task: RobotIntent["task"];
  if (/\bweld/.test(text)) task = "tack_weld";
  else if (/\b(inspect|photograph|camera|check|scan)/.test(text)) task = "inspect";
  else {
    throw new PlannerError(
      "not_understood",
      `I could not tell what to do in "${command}"; try e.g. "weld at position 1 and 2" or "inspect position 3".`,
    );
  }
  let positions: number[];
  if (/\b(all|every)\s+(positions?|pos)\b/.test(text)) positions = [...knownPositions];
  else {
    const m = new RegExp(String.raw`\b(?:positions?|pos\.?)\s*${NUMBERS}`).exec(text);
    positions = m ? numberList(m[1] ?? "") : [];
  }
  if (positions.length === 0) {
    throw new PlannerError(
      "not_understood",
      `I could not tell which positions "${command}" means; name them, e.g. "position 1 and 2" or "all positions".`,
    );
  }
  for (const comment of feedback) positions = applyFeedback(positions, comment, knownPositions);
  return { task, positions };
}

/** One revision comment: "skip position 2", "only 1", "add position 3". Anything else changes nothing. */
function applyFeedback(positions: number[], comment: string, known: number[]): number[] {
  const text = comment.toLowerCase();
  const only = new RegExp(String.raw`\bonly${POSITION_WORD}\s*${NUMBERS}`).exec(text);
  if (only) return numberList(only[1] ?? "");
  let out = [...positions];
  const removal = new RegExp(
    String.raw`\b(?:skip|remove|without|exclude|drop|omit|except|not|no)${POSITION_WORD}\s*${NUMBERS}`,
    "g",
  );
  for (const m of text.matchAll(removal)) {
    const gone = new Set(numberList(m[1] ?? ""));
    out = out.filter((p) => !gone.has(p));
  }
  const addition = new RegExp(
    String.raw`\b(?:add|also|include|plus)${POSITION_WORD}\s*${NUMBERS}`,
    "g",
  );
  for (const m of text.matchAll(addition)) {
    for (const p of numberList(m[1] ?? "")) if (!out.includes(p)) out.push(p);
  }
  if (/\b(all|every)\s+(positions?|pos)\b/.test(text)) out = [...known];
  return out;
}

/** "1, 2 and 4-5" gives [1, 2, 4, 5]: distinct, in the order written. */
export function numberList(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/(\d+)\s*-\s*(\d+)|(\d+)/g)) {
    const from = Number(m[1] ?? m[3]);
    const to = Number(m[2] ?? m[3]);
    for (let n = from; n <= to && n - from < 100; n++) if (!out.includes(n)) out.push(n);
  }
  return out;
}

// ---- synthesis ---------------------------------------------------------------------------------

/** Words that make a sentence fit a generic section, by the section's heading. */
const SECTION_CUES: Record<string, string[]> = {
  overview: ["is", "are", "designed", "runs", "means"],
  benefits: ["advantage", "benefit", "simple", "efficient", "saves", "fast", "better"],
  advantages: ["advantage", "benefit", "simple", "efficient", "saves", "fast", "better"],
  limitations: ["limit", "however", "cannot", "drawback", "only", "drops", "but"],
  costs: ["cost", "price", "bill", "cheaper", "expensive", "money"],
  "trade-offs": [
    "but",
    "however",
    "whereas",
    "while",
    "trade",
    "costs",
    "only",
    "cannot",
    "instead",
  ],
  recommendation: ["recommend", "should", "choose", "start", "fits", "needs", "best", "keep"],
  conclusion: ["overall", "should", "recommend", "best", "fits", "needs"],
};

/** The words of a heading that name a thing (not a generic section). */
function subjectTerms(heading: string): string[] {
  return SECTION_CUES[heading.trim().toLowerCase()] ? [] : keywords(heading);
}

/** Extractive synthesis: the sentences of the notes that best fit the section, cited as [n]. A section
 * named after a thing ("SQLite") takes sentences about it and not about the other things of the
 * outline; a generic section ("Trade-offs") takes sentences with its cue words and not another
 * generic section's. */
export function synthesize({
  query,
  heading,
  outline,
  notes,
  reportSoFar,
  maxChars,
  clarifications = [],
}: SynthesisInput): string {
  const cues = SECTION_CUES[heading.trim().toLowerCase()] ?? [];
  const subject = subjectTerms(heading);
  const others = outline
    .filter((h) => h !== heading)
    .flatMap(subjectTerms)
    .filter((t) => !subject.includes(t));
  const otherCues = outline
    .filter((h) => h !== heading)
    .flatMap((h) => SECTION_CUES[h.trim().toLowerCase()] ?? [])
    .filter((t) => !cues.includes(t));
  // What the reviewer said matters (their answers) counts like the question itself.
  const queryTerms = [...new Set([...keywords(query), ...answerTerms(clarifications)])];
  const candidates = notes.flatMap((n, noteIndex) =>
    sentences(n.text).map((s, i) => ({ s, ref: n.ref, order: noteIndex * 1000 + i })),
  );
  const scored = candidates
    .filter((c) => !reportSoFar.includes(c.s))
    .map((c) => {
      const about = termHits(c.s, subject);
      const cue = termHits(c.s, cues);
      // What belongs to another section of the outline counts against a sentence here.
      const elsewhere = about ? termHits(c.s, others) : cue ? termHits(c.s, otherCues) : 0;
      const score = about * 3 + cue * 3 + termHits(c.s, queryTerms) - elsewhere * 2;
      return { ...c, about, cue, score };
    })
    .filter((c) => c.score > 0 && (subject.length ? c.about > 0 : cues.length === 0 || c.cue > 0))
    .sort((x, y) => y.score - x.score || x.order - y.order);
  const picked: typeof scored = [];
  let length = 0;
  for (const c of scored) {
    if (picked.length === 4) break;
    const add = c.s.length + ` [${c.ref}]`.length + 1;
    if (length + add > maxChars) continue;
    picked.push(c);
    length += add;
  }
  if (picked.length === 0) return "_No document in the collection addresses this section._";
  return picked
    .sort((x, y) => x.order - y.order)
    .map((c) => `${c.s} [${c.ref}]`)
    .join(" ");
}
