// The edit form of a request's arguments, built from its `argsSchema` (or from the schema registered
// for its action): one field per argument, so a file's content is edited as text, an amount as a
// number, a flag as a checkbox and a choice as a list; a nested object or list is edited as JSON,
// that field only. A request without a schema gets its fields from the arguments it carries (each
// keeps the type the agent sent). The server reads the fields back into arguments with the same
// specs (never trusting the page for a field's type), and the engine checks them against the schema.
//
// After an edit, `EditedChanges` shows what changed field by field, a text field as a line diff,
// and a file's new content as the diff of what will be written.
import { applyPatch, createTwoFilesPatch, parsePatch, reversePatch } from "diff";
import type { FC } from "hono/jsx";
import { canonicalJson } from "../../core/hash.js";
import { changes, type DiffLine, looksLikeDiff, parseDiff } from "./diff.js";

export type FieldKind = "text" | "textarea" | "number" | "integer" | "boolean" | "enum" | "json";

export interface FieldSpec {
  name: string;
  kind: FieldKind;
  required: boolean;
  /** The schema's description or title of the field. */
  description?: string;
  /** The choices of an `enum` field. */
  options?: unknown[];
}

/** Fields past this many are not a form a person fills: the JSON editor is offered instead. */
const MAX_FIELDS = 40;

type JsonSchema = Record<string, unknown>;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Names of arguments that hold a document (a file's content, a message body): a text box. */
const DOCUMENT_NAME =
  /^(content|contents|body|text|code|script|source|markdown|html|patch|diff|sql|template|prompt|new_content|file_content)$|(content|body)$/i;

/** The type a property names, ignoring `null` in a list of types. */
function typeOf(p: JsonSchema): string | undefined {
  const t = p.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) {
    const named = t.filter((x): x is string => typeof x === "string" && x !== "null");
    return named.length === 1 ? named[0] : undefined;
  }
  // zod writes an optional/nullable as anyOf [{type}, {type:"null"}].
  const any = Array.isArray(p.anyOf) ? p.anyOf : Array.isArray(p.oneOf) ? p.oneOf : undefined;
  if (any) {
    const named = any.filter((x) => isRecord(x) && x.type !== "null");
    if (named.length === 1 && isRecord(named[0])) return typeOf(named[0]);
  }
  return undefined;
}

function isDocument(name: string, value: unknown, p?: JsonSchema): boolean {
  if (typeof value === "string" && (value.includes("\n") || value.length > 80)) return true;
  if (p && typeof p.maxLength === "number" && p.maxLength > 200) return true;
  if (p && (p.contentMediaType !== undefined || p.format === "textarea")) return true;
  return DOCUMENT_NAME.test(name);
}

function fromProperty(name: string, p: JsonSchema, value: unknown, required: boolean): FieldSpec {
  const description =
    typeof p.description === "string"
      ? p.description
      : typeof p.title === "string"
        ? p.title
        : undefined;
  const base = { name, required, ...(description ? { description } : {}) };
  const choices = Array.isArray(p.enum) ? p.enum : "const" in p ? [p.const] : undefined;
  if (choices && choices.length > 0 && choices.length <= 200) {
    return { ...base, kind: "enum", options: choices };
  }
  switch (typeOf(p)) {
    case "string":
      return { ...base, kind: isDocument(name, value, p) ? "textarea" : "text" };
    case "number":
      return { ...base, kind: "number" };
    case "integer":
      return { ...base, kind: "integer" };
    case "boolean":
      return { ...base, kind: "boolean" };
    default:
      return { ...base, kind: "json" };
  }
}

function fromValue(name: string, value: unknown): FieldSpec {
  const base = { name, required: true };
  if (typeof value === "string")
    return { ...base, kind: isDocument(name, value) ? "textarea" : "text" };
  if (typeof value === "number")
    return { ...base, kind: Number.isInteger(value) ? "integer" : "number" };
  if (typeof value === "boolean") return { ...base, kind: "boolean" };
  return { ...base, kind: "json" };
}

/** The fields of the edit form: from the schema's properties (then any argument the schema does
 * not name, as JSON), else from the arguments themselves; undefined when there is no form to build
 * (no properties and no arguments, or too many fields), and the JSON editor is offered alone. */
export function editFieldsOf(
  args: Record<string, unknown>,
  schema: JsonSchema | undefined,
): FieldSpec[] | undefined {
  const out: FieldSpec[] = [];
  const props = schema && isRecord(schema.properties) ? schema.properties : undefined;
  if (props && Object.keys(props).length > 0) {
    const required = new Set(
      Array.isArray(schema?.required) ? schema.required.filter((x) => typeof x === "string") : [],
    );
    for (const [name, p] of Object.entries(props)) {
      out.push(fromProperty(name, isRecord(p) ? p : {}, args[name], required.has(name)));
    }
    for (const [name, value] of Object.entries(args)) {
      if (!Object.hasOwn(props, name)) out.push({ ...fromValue(name, value), kind: "json" });
    }
  } else {
    for (const [name, value] of Object.entries(args)) out.push(fromValue(name, value));
  }
  if (out.length === 0 || out.length > MAX_FIELDS) return undefined;
  return out;
}

/** A form field's name for an argument. */
export const fieldName = (name: string) => `field:${name}`;
const fieldId = (i: number) => `edit-field-${i}`;

/** How a value shows in a field. */
function shown(spec: FieldSpec, value: unknown): string {
  if (value === undefined) return "";
  switch (spec.kind) {
    case "text":
    case "textarea":
      return typeof value === "string" ? value : JSON.stringify(value);
    case "number":
    case "integer":
      return typeof value === "number" ? String(value) : value === null ? "" : String(value);
    case "json":
      return JSON.stringify(value, null, 2);
    default:
      return "";
  }
}

export interface FieldsProps {
  fields: FieldSpec[];
  args: Record<string, unknown>;
  /** What the reviewer posted, shown again after a refusal. */
  posted?: Record<string, string | undefined> | undefined;
  /** The argument the refusal is about, and its message, shown beside that field. */
  errorField?: string | undefined;
  errorMessage?: string | undefined;
}

/** The form's fields, each labelled with its name, type and description. */
export const EditFields: FC<FieldsProps> = ({ fields, args, posted, errorField, errorMessage }) => (
  <div class="edit-fields">
    {fields.map((f, i) => {
      const value = posted?.[f.name] ?? shown(f, args[f.name]);
      const id = fieldId(i);
      const err =
        errorField === f.name && errorMessage ? (
          <p class="error field-error" id={`${id}-error`} role="alert">
            {errorMessage}
          </p>
        ) : null;
      const describedBy = err ? `${id}-error` : undefined;
      const label = (
        <label for={id}>
          <code>{f.name}</code>{" "}
          <span class="muted">
            {KIND_WORDS[f.kind]}
            {f.required ? "" : ", optional"}
          </span>
          {f.description ? <span class="muted"> — {f.description}</span> : null}
        </label>
      );
      const invalid = err ? "true" : undefined;
      switch (f.kind) {
        case "boolean": {
          const checked = posted ? posted[f.name] === "on" : args[f.name] === true;
          return (
            <div class="field field-boolean" data-field={f.name}>
              <input
                type="checkbox"
                id={id}
                name={fieldName(f.name)}
                checked={checked}
                aria-invalid={invalid}
                aria-describedby={describedBy}
              />{" "}
              {label}
              {err}
            </div>
          );
        }
        case "enum": {
          const current = posted?.[f.name];
          const selected = (o: unknown, j: number) =>
            current !== undefined
              ? current === String(j)
              : canonicalJson(o) === canonicalJson(args[f.name]);
          return (
            <div class="field" data-field={f.name}>
              {label}
              <select
                id={id}
                name={fieldName(f.name)}
                aria-invalid={invalid}
                aria-describedby={describedBy}
              >
                {f.required ? null : (
                  <option value="" selected={args[f.name] === undefined && current === undefined}>
                    (not set)
                  </option>
                )}
                {(f.options ?? []).map((o, j) => (
                  <option value={String(j)} selected={selected(o, j)}>
                    {typeof o === "string" ? o : JSON.stringify(o)}
                  </option>
                ))}
              </select>
              {err}
            </div>
          );
        }
        case "number":
        case "integer":
          return (
            <div class="field" data-field={f.name}>
              {label}
              <input
                type="number"
                inputmode={f.kind === "integer" ? "numeric" : "decimal"}
                step={f.kind === "integer" ? "1" : "any"}
                id={id}
                name={fieldName(f.name)}
                value={value}
                aria-invalid={invalid}
                aria-describedby={describedBy}
              />
              {err}
            </div>
          );
        case "text":
          return (
            <div class="field" data-field={f.name}>
              {label}
              <input
                type="text"
                id={id}
                name={fieldName(f.name)}
                value={value}
                aria-invalid={invalid}
                aria-describedby={describedBy}
              />
              {err}
            </div>
          );
        default:
          // A text box: a document edited as plain text, or (json) one field as JSON. The leading
          // newline is eaten by the HTML parser, so text that starts with one keeps it.
          return (
            <div class="field" data-field={f.name}>
              {label}
              <textarea
                id={id}
                name={fieldName(f.name)}
                class={f.kind === "json" ? "json field-json" : "document"}
                spellcheck={false}
                rows={Math.min(24, Math.max(4, value.split("\n").length + 1))}
                aria-invalid={invalid}
                aria-describedby={describedBy}
              >
                {`\n${value}`}
              </textarea>
              {err}
            </div>
          );
      }
    })}
  </div>
);

const KIND_WORDS: Record<FieldKind, string> = {
  text: "text",
  textarea: "text",
  number: "number",
  integer: "whole number",
  boolean: "yes / no",
  enum: "one of a list",
  json: "JSON",
};

export type FieldsRead =
  | { args: Record<string, unknown>; posted: Record<string, string | undefined> }
  | { field: string; message: string; posted: Record<string, string | undefined> };

/** The arguments a posted form gives, read with the request's own field specs: text as typed (the
 * browser's CRLF line ends back to the original's), numbers as numbers (left as typed for the
 * schema to refuse when they are not), a checkbox as true or false, a choice as the option it
 * names, JSON parsed. An optional field left empty that the arguments did not have stays absent. */
export function argsFromFields(
  fields: FieldSpec[],
  args: Record<string, unknown>,
  read: (name: string) => string | undefined,
): FieldsRead {
  const out: Record<string, unknown> = {};
  const posted: Record<string, string | undefined> = {};
  for (const f of fields) {
    const raw = read(fieldName(f.name));
    posted[f.name] = raw;
    const had = Object.hasOwn(args, f.name);
    const before = args[f.name];
    switch (f.kind) {
      case "boolean":
        out[f.name] = raw === "on" || raw === "true";
        break;
      case "enum": {
        if (raw === undefined || raw === "") {
          if (had) out[f.name] = before;
          break;
        }
        const j = Number(raw);
        const options = f.options ?? [];
        if (!Number.isInteger(j) || j < 0 || j >= options.length) {
          return { field: f.name, message: `${f.name}: choose one of the list`, posted };
        }
        out[f.name] = options[j];
        break;
      }
      case "number":
      case "integer": {
        const text = (raw ?? "").trim();
        if (text === "") {
          if (f.required) {
            return { field: f.name, message: `${f.name}: enter a number`, posted };
          }
          break;
        }
        const n = Number(text);
        if (!Number.isFinite(n)) {
          return { field: f.name, message: `${f.name}: “${text}” is not a number`, posted };
        }
        if (f.kind === "integer" && !Number.isInteger(n)) {
          return { field: f.name, message: `${f.name}: enter a whole number`, posted };
        }
        out[f.name] = n;
        break;
      }
      case "json": {
        const text = (raw ?? "").trim();
        if (text === "") {
          if (had && !f.required) break;
          if (had) {
            return { field: f.name, message: `${f.name}: enter a JSON value`, posted };
          }
          break;
        }
        try {
          out[f.name] = JSON.parse(text);
        } catch (err) {
          return {
            field: f.name,
            message: `${f.name}: not valid JSON (${(err as Error).message})`,
            posted,
          };
        }
        break;
      }
      default: {
        if (raw === undefined) {
          if (had) out[f.name] = before;
          break;
        }
        const keepsCrlf = typeof before === "string" && before.includes("\r\n");
        const text = keepsCrlf ? raw : raw.replace(/\r\n/g, "\n");
        if (text === "" && !had && !f.required) break;
        out[f.name] = text;
      }
    }
  }
  return { args: out, posted };
}

// --- what an edit changed -----------------------------------------------------------------------

export interface FieldChange {
  name: string;
  before: unknown;
  after: unknown;
  /** A text's change as lines, when it spans lines. */
  lines?: DiffLine[] | undefined;
  /** Set when the lines are a file's content: the diff of what will be written. */
  file?: string | undefined;
}

/** The path of a file operation, when the arguments read as one. */
function filePathOf(args: Record<string, unknown>): string | undefined {
  for (const k of ["file_path", "path", "filePath", "filename", "file"]) {
    if (typeof args[k] === "string") return args[k] as string;
  }
  return undefined;
}

/** The file as it is now, recovered from the agent's preview: its unified diff applied backwards to
 * the content it proposed. Undefined when the preview is not that diff. */
function fileBefore(preview: string | undefined, proposed: string): string | undefined {
  if (!preview || !looksLikeDiff(preview)) return undefined;
  try {
    const patches = parsePatch(preview);
    if (patches.length !== 1 || !patches[0]) return undefined;
    const back = applyPatch(proposed, reversePatch(patches[0]));
    return typeof back === "string" ? back : undefined;
  } catch {
    return undefined;
  }
}

/** The diff from the file as it is now to what will be written, when the preview lets the file be
 * recovered; else from what the agent proposed to what will be written. */
function writeDiff(
  path: string,
  preview: string | undefined,
  proposed: string,
  written: string,
): { lines: DiffLine[] | undefined; against: "file" | "proposal" } {
  const now = fileBefore(preview, proposed);
  if (now !== undefined) {
    const patch = createTwoFilesPatch(
      `a/${path}`,
      `b/${path}`,
      now,
      written,
      undefined,
      undefined,
      {
        context: 3,
      },
    );
    return {
      lines: parseDiff(patch.replace(/\n$/, "")).filter(
        (l) =>
          !l.text.startsWith("Index:") &&
          !l.text.startsWith("=====") &&
          !l.text.startsWith("\\ No newline"),
      ),
      against: "file",
    };
  }
  return {
    lines: changes(proposed, written, [`${path} (as the agent proposed)`, `${path} (as approved)`]),
    against: "proposal",
  };
}

/** What an edit changed, field by field (only the fields that differ). */
export function fieldChanges(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  preview?: string,
): (FieldChange & { against?: "file" | "proposal" })[] {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  const path = filePathOf(after) ?? filePathOf(before);
  const out: (FieldChange & { against?: "file" | "proposal" })[] = [];
  for (const name of names) {
    const b = before[name];
    const a = after[name];
    if (
      canonicalJson(b ?? null) === canonicalJson(a ?? null) &&
      (b === undefined) === (a === undefined)
    )
      continue;
    const change: FieldChange & { against?: "file" | "proposal" } = { name, before: b, after: a };
    if (typeof b === "string" && typeof a === "string" && (b.includes("\n") || a.includes("\n"))) {
      if (path !== undefined && DOCUMENT_NAME.test(name)) {
        const d = writeDiff(path, preview, b, a);
        change.lines = d.lines;
        change.file = path;
        change.against = d.against;
      } else {
        change.lines = changes(b, a, [`${name} asked for`, `${name} approved`]);
      }
    }
    out.push(change);
  }
  return out;
}

/** A value in a sentence: text quoted and cut, the rest as compact JSON. */
export function inline(v: unknown): string {
  if (v === undefined) return "(not set)";
  const text = typeof v === "string" ? `“${v}”` : JSON.stringify(v);
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}
