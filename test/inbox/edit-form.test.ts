// The edit form's specs and their reading back (src/server/inbox/edit-form.tsx), the changes an edit
// shows, the progress document (progress.tsx) and the card's markdown tree (embed/markdown-tree.ts).
import { createTwoFilesPatch } from "diff";
import { describe, expect, it } from "vitest";
import type { AuditEvent } from "../../src/core/schemas.js";
import { markdownTree } from "../../src/server/embed/markdown-tree.js";
import {
  argsFromFields,
  editFieldsOf,
  type FieldSpec,
  fieldChanges,
  fieldName,
} from "../../src/server/inbox/edit-form.js";
import { isProgress, progressOf } from "../../src/server/inbox/progress.js";

const reader = (values: Record<string, string>) => (name: string) => values[name];

describe("edit form fields", () => {
  it("from a schema: text, a document as text, numbers, yes/no, a list, nested JSON; optional ones said", () => {
    const fields = editFieldsOf(
      { path: "a.md", content: "x\ny", n: 2, tags: ["a"] },
      {
        type: "object",
        properties: {
          path: { type: "string", description: "where" },
          content: { type: "string" },
          n: { type: "integer" },
          ratio: { type: ["number", "null"] },
          force: { type: "boolean" },
          mode: { enum: ["fast", "safe"] },
          tags: { type: "array", items: { type: "string" } },
        },
        required: ["path", "content", "n"],
      },
    );
    expect(fields?.map((f) => [f.name, f.kind, f.required])).toEqual([
      ["path", "text", true],
      ["content", "textarea", true],
      ["n", "integer", true],
      ["ratio", "number", false],
      ["force", "boolean", false],
      ["mode", "enum", false],
      ["tags", "json", false],
    ]);
    expect(fields?.[0]?.description).toBe("where");
  });

  it("without a schema, each argument keeps the type the agent sent; none or too many: the JSON editor", () => {
    expect(
      editFieldsOf({ to: "a@b.c", amount: 4.5, n: 3, ok: true, meta: { a: 1 } }, undefined)?.map(
        (f) => f.kind,
      ),
    ).toEqual(["text", "number", "integer", "boolean", "json"]);
    expect(editFieldsOf({}, undefined)).toBeUndefined();
    const many = Object.fromEntries(Array.from({ length: 41 }, (_, i) => [`k${i}`, i]));
    expect(editFieldsOf(many, undefined)).toBeUndefined();
  });

  it("reads the posted fields back into typed args; a text's CRLF line ends become the original's LF", () => {
    const fields = editFieldsOf(
      { content: "a\nb\n", amount: 10, force: true, mode: "safe", tags: ["x"] },
      {
        type: "object",
        properties: {
          content: { type: "string" },
          amount: { type: "integer" },
          force: { type: "boolean" },
          mode: { enum: ["fast", "safe"] },
          tags: { type: "array" },
          note: { type: "string" },
        },
        required: ["content", "amount"],
      },
    ) as FieldSpec[];
    const read = argsFromFields(
      fields,
      { content: "a\nb\n", amount: 10, force: true, mode: "safe", tags: ["x"] },
      reader({
        [fieldName("content")]: "a\r\nB\r\n",
        [fieldName("amount")]: "12",
        [fieldName("mode")]: "0",
        [fieldName("tags")]: '["x", "y"]',
        [fieldName("note")]: "",
      }),
    );
    // The checkbox was not posted: false. The optional note left empty, absent before: absent.
    expect(read).toMatchObject({
      args: { content: "a\nB\n", amount: 12, force: false, mode: "fast", tags: ["x", "y"] },
    });
    expect("args" in read && "note" in read.args).toBe(false);
  });

  it("says which field is wrong: not a number, not JSON, a choice off the list", () => {
    const fields: FieldSpec[] = [
      { name: "amount", kind: "number", required: true },
      { name: "meta", kind: "json", required: false },
      { name: "mode", kind: "enum", required: true, options: ["a"] },
    ];
    const at = (values: Record<string, string>) => {
      const read = argsFromFields(fields, { meta: {} }, reader(values));
      return "field" in read ? [read.field, read.message] : undefined;
    };
    expect(at({ [fieldName("amount")]: "lots" })).toEqual([
      "amount",
      "amount: “lots” is not a number",
    ]);
    expect(at({ [fieldName("amount")]: "1", [fieldName("meta")]: "{" })?.[0]).toBe("meta");
    expect(at({ [fieldName("amount")]: "1", [fieldName("mode")]: "7" })).toEqual([
      "mode",
      "mode: choose one of the list",
    ]);
  });
});

describe("what an edit changed", () => {
  it("a value as before → after; a file's content as the diff from the file as it is now", () => {
    const old = "one\ntwo\n";
    const proposed = "one\ntwo\nthree\n";
    const written = "one\n2\nthree\n";
    const preview = createTwoFilesPatch("a/f.txt", "b/f.txt", old, proposed);
    const list = fieldChanges(
      { file_path: "f.txt", content: proposed, mode: 1 },
      { file_path: "f.txt", content: written, mode: 2 },
      preview,
    );
    expect(list.map((c) => c.name)).toEqual(["content", "mode"]);
    const content = list[0];
    expect(content?.file).toBe("f.txt");
    expect(content?.against).toBe("file");
    const lines = content?.lines ?? [];
    expect(lines.filter((l) => l.kind === "add").map((l) => l.text)).toEqual(["+2", "+three"]);
    expect(lines.filter((l) => l.kind === "del").map((l) => l.text)).toEqual(["-two"]);
    expect(list[1]).toMatchObject({ name: "mode", before: 1, after: 2 });
  });

  it("without a usable diff, against what the agent proposed", () => {
    const list = fieldChanges(
      { path: "f.txt", content: "a\nb\n" },
      { path: "f.txt", content: "a\nc\n" },
      "not a diff",
    );
    expect(list[0]?.against).toBe("proposal");
    expect(list[0]?.lines?.filter((l) => l.kind === "add").map((l) => l.text)).toEqual(["+c"]);
  });
});

const event = (seq: number, data: Record<string, unknown>, type = "notified"): AuditEvent =>
  ({
    seq,
    type,
    requestId: "r",
    actor: "agent",
    at: 1000 + seq,
    data,
    prevHash: "",
    hash: "",
  }) as AuditEvent;

describe("the progress document", () => {
  it("keeps the latest report, the tool calls in order with their results, and how the run ended", () => {
    const doc = progressOf([
      event(5, { event: "report_updated", section: "B", report_markdown: "# two" }),
      event(1, { event: "tool_call", tool: "search", args: { q: "x" } }),
      event(2, { event: "tool_result", tool: "search" }),
      event(3, { event: "report_updated", section: "A", report_markdown: "# one" }),
      event(4, { event: "tool_call", tool: "fetch" }),
      event(6, { event: "stop", status: "completed", message: "done" }),
      event(7, { event: "embed token issued", reviewer: "x" }),
      event(8, { outcome: "approved" }, "decided"),
    ]);
    expect(doc?.report).toMatchObject({ markdown: "# two", section: "B", seq: 5 });
    expect(doc?.toolCalls.map((c) => [c.tool, c.args, c.done])).toEqual([
      ["search", '{"q":"x"}', true],
      ["fetch", undefined, false],
    ]);
    expect(doc?.end).toMatchObject({ status: "completed", message: "done" });
    expect(doc?.events).toBe(6);
    expect(isProgress(event(7, { event: "embed token issued" }))).toBe(false);
    expect(progressOf([event(1, { event: "embed token issued" })])).toBeUndefined();
  });
});

describe("the card's markdown tree", () => {
  it("keeps structure and text, web links only, and no markup", () => {
    const tree = markdownTree(
      "# Title\n\nSome **bold** and `code`.\n\n- one\n- [two](https://example.org)\n- [bad](javascript:alert(1))\n\n<script>x()</script>\n",
    );
    expect(tree[0]).toEqual({ t: "h1", c: ["Title"] });
    expect(tree[1]).toEqual({
      t: "p",
      c: ["Some ", { t: "strong", c: ["bold"] }, " and ", { t: "code", c: ["code"] }, "."],
    });
    const list = tree[2] as { t: string; c: { t: string; c: unknown[] }[] };
    expect(list.t).toBe("ul");
    expect(list.c[1]?.c[0]).toEqual({ t: "a", href: "https://example.org", c: ["two"] });
    // A link that is not http(s) is no link: markdown-it leaves it as text.
    const tags: string[] = [];
    const walk = (nodes: unknown[]) => {
      for (const n of nodes) {
        if (typeof n === "string") continue;
        const el = n as { t: string; c: unknown[]; href?: string };
        tags.push(el.href ? `${el.t} ${el.href}` : el.t);
        walk(el.c);
      }
    };
    walk(tree);
    expect(tags.filter((t) => t.startsWith("a"))).toEqual(["a https://example.org"]);
    // Raw HTML stays text (the card sets it as textContent): no element but the allowed ones.
    expect(tags.every((t) => /^(h1|p|strong|code|ul|li|a)\b/.test(t))).toBe(true);
    expect(JSON.stringify(tree)).toContain("<script>x()</script>");
  });
});
