// The graph the LangGraph adapter tests run: a fake model proposes a `write_file` tool call (`agent`),
// the `review` node gates each call with `airlockGate` and runs approved ones with `gate.run`, and the
// model answers once more after reading the tool results. Every side effect is appended to a log
// file, so counts hold across processes (the restart test parks in one process, resumes in another).
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import {
  type BaseCheckpointSaver,
  END,
  MessagesAnnotation,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { airlockGate, type GateApi } from "../../../src/adapters/langgraph.js";
import type { OnTimeout } from "../../../src/core/schemas.js";

export interface FixtureOptions {
  airlock: GateApi;
  checkpointer: BaseCheckpointSaver;
  /** Where side effects are counted, one line each. */
  log: string;
  /** The tool call the model proposes. @default a write of notes.md */
  call?: { path: string; content: string };
  timeoutMs?: number;
  onTimeout?: OnTimeout;
  /** Who opens the gate. @default "file-agent" (over HTTP: the token's own name) */
  requester?: string;
}

/** One line per side effect: `model`, `before_gate`, `tool <json args>`, `after_gate`. */
export function record(log: string, line: string): void {
  appendFileSync(log, `${line}\n`);
}

export function count(log: string, prefix: string): number {
  if (!existsSync(log)) return 0;
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l === prefix || l.startsWith(`${prefix} `)).length;
}

export function toolArgs(log: string): unknown[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("tool "))
    .map((l) => JSON.parse(l.slice(5)));
}

export function buildGraph(options: FixtureOptions) {
  const { airlock, log } = options;
  const call = options.call ?? { path: "notes.md", content: "# Notes\n" };
  // Scripted by what it reads, not by how often it was called, so a second process continues the
  // conversation where the first one parked it: a tool call first, then an answer to the tool result.
  const model = fakeModel();
  const reply = (messages: BaseMessage[]) => {
    const last = messages[messages.length - 1];
    if (last && ToolMessage.isInstance(last))
      return new AIMessage(`I read: ${String(last.content)}`);
    return new AIMessage({
      content: "",
      tool_calls: [{ name: "write_file", args: call, id: "call-1", type: "tool_call" }],
    });
  };
  for (let i = 0; i < 50; i++) model.respond(reply);

  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => {
      record(log, "model");
      return { messages: [await model.invoke(state.messages)] };
    })
    .addNode("review", async (state) => {
      const last = state.messages[state.messages.length - 1] as AIMessage;
      const out: ToolMessage[] = [];
      for (const tc of last.tool_calls ?? []) {
        // The code before the gate: LangGraph re-runs it when it resumes this node, Airlock never.
        record(log, "before_gate");
        const gate = await airlockGate(airlock, {
          action: "files.write",
          title: `Write ${String(tc.args.path)}`,
          args: tc.args,
          allowed: ["approve", "reject", "edit"],
          requester: options.requester ?? "file-agent",
          ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
          ...(options.onTimeout ? { onTimeout: options.onTimeout } : {}),
        });
        record(log, "after_gate");
        let content: string;
        if (gate.approved) {
          const ran = await gate.run((args) => {
            record(log, `tool ${JSON.stringify(args)}`);
            return `wrote ${String(args.path)}`;
          });
          content = ran.ok ? ran.value : `not run: ${ran.detail}`;
        } else {
          content = `not approved: ${gate.reason}`;
        }
        out.push(new ToolMessage({ content, tool_call_id: tc.id ?? "", name: tc.name }));
      }
      return { messages: out };
    })
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state) => {
      const last = state.messages[state.messages.length - 1] as AIMessage;
      return last.tool_calls?.length ? "review" : END;
    })
    .addEdge("review", "agent")
    .compile({ checkpointer: options.checkpointer });
  return { graph, model };
}

export type FixtureGraph = ReturnType<typeof buildGraph>["graph"];

export function threadConfig(threadId: string) {
  return { configurable: { thread_id: threadId } };
}
