// Writes the generated parts of the reference pages from the code itself: docs/reference/http-api.md
// from the OpenAPI document the server serves (src/server/openapi.ts), docs/reference/cli.md from the
// commands' own help (src/cli/program.ts). Each page keeps its written text; only the part between
// the two markers below is replaced. `npm run docs` runs this before building the site;
// `--check` only reports the pages that are out of date (exit 1).
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { buildProgram } from "../../src/cli/program.js";
import { openApiDocument } from "../../src/server/openapi.js";

const START =
  "<!-- generated: start (docs/.vitepress/reference.ts writes this part; do not edit) -->";
const END = "<!-- generated: end -->";

type Json = Record<string, unknown>;
type Schema = Json & {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  description?: string;
};

/** Text as both GitHub and the site (Vue templates) show it as written: outside code spans, `<` and
 * `{{` are escaped. */
function text(s: string): string {
  return s
    .replace(/\n/g, " ")
    .split(/(`[^`]*`)/)
    .map((part, i) =>
      i % 2 === 1 ? part : part.replace(/</g, "&lt;").replace(/\{\{/g, "&#123;&#123;"),
    )
    .join("");
}

/** Text for a table cell. */
function cell(s: string): string {
  return text(s).replace(/\|/g, "\\|");
}

/** A schema in one line: `string (1–200)`, `"a" | "b"`, `[RequestInput](#requestinput)[]`. */
function typeOf(schema: Schema | undefined): string {
  if (!schema) return "any";
  if (schema.$ref) {
    const name = schema.$ref.split("/").at(-1) as string;
    return `[${name}](#${name.toLowerCase()})`;
  }
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return alternatives.map(typeOf).join(" or ");
  if (schema.enum) return schema.enum.map((v) => `\`${JSON.stringify(v)}\``).join(", ");
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  const type = Array.isArray(schema.type) ? schema.type.join(" or ") : schema.type;
  if (type === "array")
    return `${typeOf(schema.items)} list${bounds(schema, "minItems", "maxItems")}`;
  if (type === "string") return `string${bounds(schema, "minLength", "maxLength")}`;
  if (type === "integer" || type === "number") {
    return `${type}${bounds(schema, "minimum", "maximum", "exclusiveMinimum")}`;
  }
  if (type === "object" || schema.properties) return "object";
  return type ?? "any";
}

function bounds(schema: Schema, min: string, max: string, exclusiveMin?: string): string {
  const lo = schema[min] as number | undefined;
  const hi = schema[max] as number | undefined;
  const above = exclusiveMin ? (schema[exclusiveMin] as number | undefined) : undefined;
  const from = lo !== undefined ? `${lo}` : above !== undefined ? `>${above}` : undefined;
  if (from === undefined && hi === undefined) return "";
  return ` (${from ?? ""}–${hi ?? ""})`;
}

function constraints(schema: Schema): string {
  const out: string[] = [];
  if (schema.default !== undefined) out.push(`default \`${JSON.stringify(schema.default)}\``);
  if (typeof schema.pattern === "string") out.push(`pattern \`${schema.pattern}\``);
  if (schema.description) out.push(schema.description);
  return out.join("; ");
}

function schemaTable(schema: Schema): string[] {
  const props = Object.entries(schema.properties ?? {});
  if (props.length === 0) return [typeOf(schema), ""];
  const required = new Set(schema.required ?? []);
  return [
    "| field | type | required | notes |",
    "| --- | --- | --- | --- |",
    ...props.map(
      ([name, p]) =>
        `| \`${name}\` | ${cell(typeOf(p))} | ${required.has(name) ? "yes" : ""} | ${cell(constraints(p))} |`,
    ),
    "",
  ];
}

/** An answer carrying a problem document (an error), not the route's own result. */
function isProblem(r: { content?: Record<string, unknown> }): boolean {
  return Object.keys(r.content ?? {}).includes("application/problem+json");
}

/** The HTTP reference: every route of the OpenAPI document, then every schema it names. */
export function httpReference(doc: Json = openApiDocument()): string {
  const lines: string[] = [];
  const info = doc.info as { description?: string };
  if (info.description) lines.push(text(info.description), "");
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const problemText = new Map<string, string>();
  lines.push("### Routes", "", "| method | path | what |", "| --- | --- | --- |");
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      lines.push(`| ${method.toUpperCase()} | \`${path}\` | ${cell(String(op.summary ?? ""))} |`);
    }
  }
  lines.push("");
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      lines.push(`### ${method.toUpperCase()} \`${path}\``, "", text(String(op.summary ?? "")), "");
      if (Array.isArray(op.security) && op.security.length === 0)
        lines.push("No token needed.", "");
      const params = (op.parameters ?? []) as {
        name: string;
        in: string;
        required?: boolean;
        description?: string;
        schema?: Schema;
      }[];
      if (params.length > 0) {
        lines.push(
          "| parameter | in | type | required | notes |",
          "| --- | --- | --- | --- | --- |",
        );
        for (const p of params) {
          const notes = [p.schema ? constraints(p.schema) : "", p.description ?? ""]
            .filter(Boolean)
            .join("; ");
          lines.push(
            `| \`${p.name}\` | ${p.in} | ${cell(typeOf(p.schema))} | ${p.required ? "yes" : ""} | ${cell(notes)} |`,
          );
        }
        lines.push("");
      }
      const body = op.requestBody as
        | { required?: boolean; content: Record<string, { schema?: Schema }> }
        | undefined;
      if (body) {
        for (const [type, media] of Object.entries(body.content)) {
          const need = body.required ? "" : " (optional)";
          lines.push(`Body${need}: \`${type}\`, ${typeOf(media.schema)}.`, "");
        }
      }
      const responses = op.responses as Record<
        string,
        { description: string; content?: Record<string, { schema?: Schema }> }
      >;
      const answers = Object.entries(responses).filter(([, r]) => !isProblem(r));
      const problems = Object.entries(responses).filter(([, r]) => isProblem(r));
      lines.push("| status | answer |", "| --- | --- |");
      for (const [status, r] of answers) {
        const media = Object.entries(r.content ?? {})
          .map(([type, m]) => `\`${type}\`${m.schema ? ` ${typeOf(m.schema)}` : ""}`)
          .join(", ");
        lines.push(`| ${status} | ${cell(r.description)}${media ? ` (${cell(media)})` : ""} |`);
      }
      lines.push("");
      if (problems.length > 0) {
        const list = problems.map(([status]) => `[${status}](#problem-${status})`).join(", ");
        lines.push(`Problems: ${list}.`, "");
      }
      for (const [status, r] of problems) problemText.set(status, r.description);
    }
  }
  lines.push("### Problem statuses", "");
  lines.push("Every problem is `application/problem+json`, [Problem](#problem).", "");
  for (const [status, description] of [...problemText].sort()) {
    lines.push(`#### Problem ${status}`, "", text(description), "");
  }
  lines.push("### Schemas", "");
  const schemas = (doc.components as { schemas: Record<string, Schema> }).schemas;
  for (const [name, schema] of Object.entries(schemas)) {
    lines.push(`#### ${name}`, "", ...schemaTable(schema));
  }
  return lines.join("\n");
}

/** The CLI reference: `airlock --help` and the help of every command under it, depth first. */
export function cliReference(program: Command = buildProgram()): string {
  const lines: string[] = [];
  const walk = (command: Command, path: string[], depth: number): void => {
    if (depth > 4) return;
    const name = [...path, command.name()].join(" ");
    command.configureHelp({ helpWidth: 100 });
    const help = command.helpInformation().replace(/\s+$/, "");
    lines.push(`### ${name}`, "", "```text", help, "```", "");
    for (const sub of command.commands) walk(sub, [...path, command.name()], depth + 1);
  };
  walk(program, [], 0);
  return lines.join("\n");
}

/** `page` with its generated part replaced by `generated`. */
export function withGenerated(page: string, generated: string): string {
  const from = page.indexOf(START);
  const to = page.indexOf(END);
  if (from < 0 || to < from) throw new Error(`the page has no ${START} … ${END} markers`);
  return `${page.slice(0, from + START.length)}\n\n${generated.trim()}\n\n${page.slice(to)}`;
}

const PAGES: { file: string; generate: () => string }[] = [
  { file: "../reference/http-api.md", generate: () => httpReference() },
  { file: "../reference/cli.md", generate: () => cliReference() },
];

function main(check: boolean): number {
  let stale = 0;
  for (const { file, generate } of PAGES) {
    const path = fileURLToPath(new URL(file, import.meta.url));
    const page = readFileSync(path, "utf8");
    const next = withGenerated(page, generate());
    if (next === page) continue;
    stale++;
    if (check) process.stderr.write(`${path} is out of date: run npm run docs\n`);
    else writeFileSync(path, next);
  }
  return check && stale > 0 ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = main(process.argv.includes("--check"));
}
