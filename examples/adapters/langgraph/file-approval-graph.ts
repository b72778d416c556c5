// Pattern 4 as a real LangGraph graph: an agent (a fake tool-calling model, offline) proposes file
// operations; `tools` runs the `file_operation` tool, which never writes but answers `needs_approval`
// with a diff; `route_after_tools` sends those to `check_file_approval`, where `airlockGate` parks the
// thread until a person (or the small-writes rule) decides, and `gate.run` writes exactly the approved
// (possibly edited) operation, once. `assess` sees the same kind of tool message either way.
//
//   agent → tools → route_after_tools → [check_file_approval | assess] → assess → agent → … → END
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import {
  Annotation,
  type BaseCheckpointSaver,
  END,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { airlockGate, type GateApi } from "../../../src/adapters/langgraph.js";
import { FILE_DELETE_ACTION, FILE_WRITE_ACTION } from "../../file-approval/approval-node.js";
import {
  asPendingOperation,
  executeFileOperation,
  type FileOperationCall,
  type FileToolResult,
  fileOperation,
} from "../../file-approval/file-tool.js";

export interface FileApprovalGraphOptions {
  airlock: GateApi;
  /** The sandbox folder; nothing outside it is touched. */
  dir: string;
  /** What the (fake) model proposes, one tool call per turn. */
  operations: FileOperationCall[];
  /** @default a MemorySaver (use a durable one to resume in another process) */
  checkpointer?: BaseCheckpointSaver;
  /** The gates' requester. @default "file-agent" */
  requester?: string;
  /** Each gate's deadline. @default one hour */
  timeoutMs?: number;
}

export type StepStatus = "executed" | "auto_executed" | "cancelled" | "refused" | "failed";

export interface GraphStep {
  path: string;
  operation: string;
  status: StepStatus;
  requestId?: string;
  detail: string;
}

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  /** The tool's answer waiting for `check_file_approval`. */
  pending: Annotation<FileToolResult | undefined>(),
  steps: Annotation<GraphStep[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

/** The fake model: one `file_operation` call per turn, in order, then a summary. */
function scriptedModel(operations: FileOperationCall[]) {
  const model = fakeModel();
  const reply = (messages: BaseMessage[]) => {
    const done = messages.filter((m) => ToolMessage.isInstance(m)).length;
    const next = operations[done];
    if (!next) return new AIMessage(`Done: ${done} file operation(s) handled.`);
    return new AIMessage({
      content: "",
      tool_calls: [
        { name: "file_operation", args: { ...next }, id: `op-${done}`, type: "tool_call" },
      ],
    });
  };
  for (let i = 0; i <= operations.length + 1; i++) model.respond(reply);
  return model;
}

function lastToolCall(messages: BaseMessage[]) {
  const last = messages[messages.length - 1];
  if (!last || !AIMessage.isInstance(last)) return undefined;
  return last.tool_calls?.[0];
}

export function buildFileApprovalGraph(options: FileApprovalGraphOptions) {
  const { airlock, dir } = options;
  const model = scriptedModel(options.operations);
  return new StateGraph(State)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("tools", (state) => {
      const call = lastToolCall(state.messages);
      if (!call?.id) return {};
      const answer = fileOperation(dir, call.args as FileOperationCall);
      if (answer.needs_approval) return { pending: answer };
      const status: StepStatus = answer.error.startsWith("refused") ? "refused" : "failed";
      const args = call.args as FileOperationCall;
      return {
        pending: undefined,
        messages: [new ToolMessage({ content: JSON.stringify(answer), tool_call_id: call.id })],
        steps: [{ path: args.path, operation: args.operation, status, detail: answer.error }],
      };
    })
    .addNode("check_file_approval", async (state) => {
      const call = lastToolCall(state.messages);
      const answer = state.pending;
      if (!call?.id || !answer?.needs_approval) return {};
      const { approval_data: data, pending_operation: op } = answer;
      const verb = op.operation === "delete" ? "Delete" : data.exists ? "Modify" : "Create";
      const gate = await airlockGate(airlock, {
        action: op.operation === "delete" ? FILE_DELETE_ACTION : FILE_WRITE_ACTION,
        title: `${verb} ${data.file_path}`,
        summary: data.message,
        preview: data.diff,
        args: op,
        allowed: ["approve", "reject", "edit"],
        requester: options.requester ?? "file-agent",
        timeoutMs: options.timeoutMs ?? 3_600_000,
      });
      const base = { path: data.file_path, operation: op.operation, requestId: gate.request.id };
      const reply = (content: string, step: GraphStep) => ({
        pending: undefined,
        messages: [new ToolMessage({ content, tool_call_id: call.id ?? "" })],
        steps: [step],
      });
      if (!gate.approved) {
        const content = `❌ File operation cancelled: ${data.message} (${gate.reason})`;
        return reply(content, { ...base, status: "cancelled", detail: gate.reason ?? "" });
      }
      const ran = await gate.run(async (args) => {
        const approved = asPendingOperation(args);
        if (!approved || approved.operation !== op.operation) {
          throw new Error("the approved arguments are not a file operation of the same kind");
        }
        return executeFileOperation(dir, approved);
      });
      if (!ran.ok) {
        return reply(`❌ File operation not run: ${ran.detail}`, {
          ...base,
          status: "cancelled",
          detail: ran.detail,
        });
      }
      const auto = gate.decision?.method === "auto";
      const edited = gate.decision?.method === "edit" ? " (as edited by the reviewer)" : "";
      const status: StepStatus = !ran.value.success
        ? "failed"
        : auto
          ? "auto_executed"
          : "executed";
      return reply(JSON.stringify(ran.value), {
        ...base,
        status,
        detail: ran.value.success ? `done${edited}` : (ran.value.error ?? "failed"),
      });
    })
    .addNode("assess", () => ({}))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state) => (lastToolCall(state.messages) ? "tools" : END))
    .addConditionalEdges("tools", (state) =>
      state.pending?.needs_approval ? "check_file_approval" : "assess",
    )
    .addEdge("check_file_approval", "assess")
    .addEdge("assess", "agent")
    .compile({ checkpointer: options.checkpointer ?? new MemorySaver() });
}

export type FileApprovalGraph = ReturnType<typeof buildFileApprovalGraph>;
