import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  completionsUrl,
  createPlanner,
  isPlannerError,
  llmPlanner,
  type PlannerError,
  ruleBasedPlanner,
} from "./index.js";

describe("rule-based planner", () => {
  const planner = ruleBasedPlanner();

  it("plans a comparison with one query per side and an outline naming both", async () => {
    const plan = await planner.planResearch({
      query: "Should a small team use SQLite or PostgreSQL for an approval service?",
      maxQueries: 4,
    });
    expect(plan.outline).toEqual([
      "Overview",
      "SQLite",
      "PostgreSQL",
      "Trade-offs",
      "Recommendation",
    ]);
    expect(plan.expandedQueries).toEqual([
      "SQLite advantages",
      "PostgreSQL advantages",
      "SQLite limitations",
      "PostgreSQL limitations",
    ]);
    expect(plan.clarifyingQuestions[0]).toContain("SQLite and PostgreSQL");
  });

  it("parses intents, and applies revision comments in order", async () => {
    const known = [1, 2, 3];
    const parse = (command: string, feedback: string[] = []) =>
      planner.parseIntent({ command, feedback, knownPositions: known });
    expect(await parse("weld at position 1 and 2")).toEqual({
      task: "tack_weld",
      positions: [1, 2],
    });
    expect(await parse("Weld at all positions", ["Skip position 2, too risky today"])).toEqual({
      task: "tack_weld",
      positions: [1, 3],
    });
    expect(await parse("inspect positions 1-3", ["only position 3"])).toEqual({
      task: "inspect",
      positions: [3],
    });
    expect(await parse("weld at position 1", ["add position 3", ""])).toEqual({
      task: "tack_weld",
      positions: [1, 3],
    });
    // A comment without a recognisable change leaves the intent as it was.
    expect(await parse("weld at position 2", ["looks a bit fast"])).toEqual({
      task: "tack_weld",
      positions: [2],
    });
  });

  it("refuses a command it cannot read, with a PlannerError that says what to type", async () => {
    const err = await planner
      .parseIntent({ command: "make coffee", feedback: [], knownPositions: [1] })
      .catch((e: unknown) => e);
    expect(isPlannerError(err) && err.code).toBe("not_understood");
    expect((err as Error).message).toContain("weld at position 1 and 2");
    await expect(
      planner.parseIntent({ command: "weld somewhere", feedback: [], knownPositions: [1] }),
    ).rejects.toThrow(/which positions/);
  });

  it("reflects: weak findings get critiques and follow-up queries, capped", async () => {
    const strong = { question: "What is a COP?", answer: "", confidence: 0.9, sources: ["c", "d"] };
    const findings = [
      { question: "What do cold homes measure?", answer: "", confidence: 0.3, sources: ["a"] },
      { question: "How do costs compare?", answer: "", confidence: 0.5, sources: ["b"] },
      strong,
    ];
    const r = await planner.reflect({ mainQuery: "q", findings, maxQueries: 1 });
    expect(r.critique.map((c) => c.importance)).toEqual(["high", "medium"]);
    expect(r.recommendedQueries).toEqual(["cold homes measure measured data"]);
    expect(r.additionalQuestions).toHaveLength(2);
    const good = await planner.reflect({
      mainQuery: "q",
      findings: [strong, { ...strong, sources: ["e"] }],
      maxQueries: 3,
    });
    expect(good.recommendedQueries).toEqual([]);
    expect(good.critique).toEqual([
      { issue: "The findings agree and are well sourced", importance: "low" },
    ]);
  });

  it("synthesizes from the notes only, cites them, and skips what the report already says", async () => {
    const notes = [
      {
        ref: 1,
        title: "A",
        text: "SQLite runs in the process. PostgreSQL is a server. Tea is hot.",
      },
      { ref: 2, title: "B", text: "SQLite allows one writer at a time." },
    ];
    const base = {
      query: "SQLite or PostgreSQL?",
      outline: ["SQLite", "PostgreSQL"],
      notes,
      maxChars: 500,
    };
    const text = await planner.synthesize({ ...base, heading: "SQLite", reportSoFar: "" });
    expect(text).toBe("SQLite runs in the process. [1] SQLite allows one writer at a time. [2]");
    const again = await planner.synthesize({
      ...base,
      heading: "SQLite",
      reportSoFar: "SQLite runs in the process.",
    });
    expect(again).toBe("SQLite allows one writer at a time. [2]");
    const short = await planner.synthesize({
      ...base,
      heading: "SQLite",
      reportSoFar: "",
      maxChars: 40,
    });
    expect(short.length).toBeLessThanOrEqual(40);
  });
});

// ---- the OpenAI-compatible planner, against a fake chat-completions server on loopback ----

interface Seen {
  path: string;
  auth: string | undefined;
  body: {
    model: string;
    response_format: { type: string };
    messages: { role: string; content: string }[];
  };
}

type Reply = { status: number; content?: string; raw?: string };

function startFakeServer(
  reply: (task: string) => Reply,
): Promise<{ server: Server; url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    let data = "";
    for await (const chunk of req) data += chunk;
    const body = JSON.parse(data) as Seen["body"];
    seen.push({ path: req.url ?? "", auth: req.headers.authorization, body });
    const task = /TASK: (\w+)/.exec(body.messages[0]?.content ?? "")?.[1] ?? "";
    const r = reply(task);
    res.writeHead(r.status, { "content-type": "application/json" });
    res.end(
      r.raw ??
        JSON.stringify({
          choices: [{ index: 0, message: { role: "assistant", content: r.content } }],
        }),
    );
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, url: `http://127.0.0.1:${port}/v1`, seen });
    });
  });
}

const GOOD: Record<string, unknown> = {
  plan_research: {
    clarifyingQuestions: ["For whom?"],
    expandedQueries: ["q one", "q two", "q three"],
    outline: ["Intro", "Body"],
  },
  reflect: {
    critique: [{ issue: "Thin sourcing", importance: "high" }],
    additionalQuestions: ["What else?"],
    recommendedQueries: ["extra one", "extra two"],
  },
  parse_intent: { task: "inspect", positions: [2] },
  synthesize: { markdown: "Model prose [1]." },
};

describe("LLM planner (OpenAI-compatible chat completions)", () => {
  let good: Awaited<ReturnType<typeof startFakeServer>>;
  let broken: Awaited<ReturnType<typeof startFakeServer>>;

  beforeAll(async () => {
    good = await startFakeServer((task) =>
      task === "synthesize"
        ? { status: 200, content: `\`\`\`json\n${JSON.stringify(GOOD[task])}\n\`\`\`` }
        : { status: 200, content: JSON.stringify(GOOD[task]) },
    );
    broken = await startFakeServer((task) => {
      if (task === "plan_research") return { status: 500, raw: '{"error":"model overloaded"}' };
      if (task === "reflect") return { status: 200, content: "Sure! Here are my thoughts." };
      if (task === "parse_intent")
        return { status: 200, content: '{"task":"dance","positions":[1]}' };
      return { status: 200, raw: '{"object":"list"}' };
    });
  });
  afterAll(async () => {
    await new Promise((r) => good.server.close(r));
    await new Promise((r) => broken.server.close(r));
  });

  it("sends a JSON-mode prompt per step and uses the model's answers", async () => {
    const planner = llmPlanner({ url: good.url, model: "tiny-model", apiKey: "k-123" });
    expect(planner.name).toBe("llm:tiny-model");
    const plan = await planner.planResearch({ query: "anything", maxQueries: 2 });
    expect(plan).toEqual({
      ...(GOOD.plan_research as object),
      expandedQueries: ["q one", "q two"],
    });
    const reflection = await planner.reflect({ mainQuery: "m", findings: [], maxQueries: 1 });
    expect(reflection.recommendedQueries).toEqual(["extra one"]);
    const intent = await planner.parseIntent({
      command: "c",
      feedback: ["skip 1"],
      knownPositions: [1, 2],
    });
    expect(intent).toEqual({ task: "inspect", positions: [2] });
    // A fenced answer is accepted.
    const prose = await planner.synthesize({
      query: "q",
      heading: "Body",
      outline: ["Body"],
      notes: [],
      reportSoFar: "",
      maxChars: 100,
    });
    expect(prose).toBe("Model prose [1].");

    expect(good.seen).toHaveLength(4);
    for (const s of good.seen) {
      expect(s.path).toBe("/v1/chat/completions");
      expect(s.auth).toBe("Bearer k-123");
      expect(s.body.model).toBe("tiny-model");
      expect(s.body.response_format).toEqual({ type: "json_object" });
      expect(s.body.messages[0]?.role).toBe("system");
      expect(s.body.messages[0]?.content).toContain("Reply with one JSON object only");
    }
    const intentCall = good.seen[2];
    expect(JSON.parse(intentCall?.body.messages[1]?.content ?? "{}")).toEqual({
      command: "c",
      feedback: ["skip 1"],
      knownPositions: [1, 2],
    });
  });

  it("without a fallback, fails with a clear error per kind of failure", async () => {
    const planner = llmPlanner({ url: `${broken.url}/chat/completions`, model: "m" });
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => "resolved",
        (e: unknown) => (isPlannerError(e) ? `${e.code}: ${e.message}` : String(e)),
      );
    expect(await codeOf(planner.planResearch({ query: "x", maxQueries: 2 }))).toMatch(
      /^llm_http: .*answered HTTP 500: \{"error":"model overloaded"\}/,
    );
    expect(await codeOf(planner.reflect({ mainQuery: "x", findings: [], maxQueries: 1 }))).toMatch(
      /^llm_bad_output: .*did not answer with JSON for reflect: Sure! Here are my thoughts\./,
    );
    expect(
      await codeOf(planner.parseIntent({ command: "x", feedback: [], knownPositions: [1] })),
    ).toMatch(/^llm_bad_output: .*wrong shape \(task:/);
    expect(
      await codeOf(
        planner.synthesize({
          query: "x",
          heading: "h",
          outline: [],
          notes: [],
          reportSoFar: "",
          maxChars: 9,
        }),
      ),
    ).toMatch(/^llm_bad_output: .*without choices\[0\]\.message\.content/);
  });

  it("reports an unreachable server and tells how to get back to the offline planner", async () => {
    const closed = await startFakeServer(() => ({ status: 200, content: "{}" }));
    const url = closed.url;
    await new Promise((r) => closed.server.close(r));
    const err: unknown = await llmPlanner({ url, model: "m", timeoutMs: 2000 })
      .planResearch({ query: "x", maxQueries: 1 })
      .catch((e: unknown) => e);
    expect(isPlannerError(err) && err.code).toBe("llm_unreachable");
    expect(String(err)).toContain("unset AIRLOCK_LLM_URL");
  });

  it("with a fallback, answers from the offline planner and reports why", async () => {
    const errors: PlannerError[] = [];
    const planner = llmPlanner({
      url: broken.url,
      model: "m",
      fallback: ruleBasedPlanner(),
      onFallback: (e) => errors.push(e),
    });
    const intent = await planner.parseIntent({
      command: "weld at position 1 and 2",
      feedback: ["skip position 2"],
      knownPositions: [1, 2, 3],
    });
    expect(intent).toEqual({ task: "tack_weld", positions: [1] });
    expect(errors.map((e) => e.code)).toEqual(["llm_bad_output"]);
  });

  it("createPlanner picks the LLM planner only when AIRLOCK_LLM_URL is set", async () => {
    expect(createPlanner({}).name).toBe("rule-based");
    expect(() => createPlanner({ AIRLOCK_LLM_URL: good.url })).toThrow(/AIRLOCK_LLM_MODEL/);
    expect(() => createPlanner({ AIRLOCK_LLM_URL: "not a url", AIRLOCK_LLM_MODEL: "m" })).toThrow(
      /AIRLOCK_LLM_URL/,
    );
    const before = good.seen.length;
    const planner = createPlanner({ AIRLOCK_LLM_URL: good.url, AIRLOCK_LLM_MODEL: "tiny-model" });
    expect(planner.name).toBe("llm:tiny-model");
    expect(await planner.parseIntent({ command: "c", feedback: [], knownPositions: [] })).toEqual({
      task: "inspect",
      positions: [2],
    });
    expect(good.seen.length).toBe(before + 1);
    expect(good.seen[good.seen.length - 1]?.auth).toBeUndefined();
  });

  it("completionsUrl accepts a base URL or the full endpoint", () => {
    expect(completionsUrl("http://127.0.0.1:8080/v1/")).toBe(
      "http://127.0.0.1:8080/v1/chat/completions",
    );
    expect(completionsUrl("http://127.0.0.1:8080/v1/chat/completions")).toBe(
      "http://127.0.0.1:8080/v1/chat/completions",
    );
  });
});
