// Parsers for command-line values, each failing with a message that names the option.
import type { Item } from "../core/schemas.js";
import { CliError } from "./context.js";

export function positiveNumber(option: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) {
      throw new CliError(`${option} expects a number above 0, got \`${value}\``);
    }
    return n;
  };
}

export function positiveInt(option: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0) {
      throw new CliError(`${option} expects a whole number from 1 up, got \`${value}\``);
    }
    return n;
  };
}

export function wholeNumber(option: string, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isInteger(n) || n < 0 || n > max) {
      throw new CliError(`${option} expects a whole number from 0 to ${max}, got \`${value}\``);
    }
    return n;
  };
}

/** One of `choices`, as written. */
export function oneOf<T extends string>(option: string, choices: readonly T[]) {
  return (value: string): T => {
    if (!(choices as readonly string[]).includes(value)) {
      throw new CliError(`${option} expects one of ${choices.join(", ")}, got \`${value}\``);
    }
    return value as T;
  };
}

export function jsonObject(option: string) {
  return (value: string): Record<string, unknown> => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch (err) {
      throw new CliError(`${option} expects a JSON object: ${(err as Error).message}`);
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new CliError(`${option} expects a JSON object, got ${JSON.stringify(parsed)}`);
    }
    return parsed as Record<string, unknown>;
  };
}

/** Any JSON value (`--response`): text must be quoted as JSON (`'"eu"'`); `--answer` takes plain text. */
export function jsonValue(option: string) {
  return (value: string): unknown => {
    try {
      return JSON.parse(value) as unknown;
    } catch (err) {
      throw new CliError(
        `${option} expects a JSON value (an object, a list, a number, or text in double quotes; --answer takes plain text): ${(err as Error).message}`,
      );
    }
  };
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `--select 1,3-4` by 1-based position (as shown by `airlock show`), or by item id. */
export function selectionToIds(spec: string, items: Item[]): string[] {
  const ids: string[] = [];
  for (const raw of spec.split(",")) {
    const part = raw.trim();
    if (!part) continue;
    const range = /^(\d+)\s*-\s*(\d+)$/.exec(part);
    if (range) {
      const from = Number(range[1]);
      const to = Number(range[2]);
      if (from > to) throw new CliError(`--select: the range \`${part}\` runs backwards`);
      for (let n = from; n <= to; n++) ids.push(itemAt(n, items));
    } else if (/^\d+$/.test(part)) {
      ids.push(itemAt(Number(part), items));
    } else {
      if (!items.some((i) => i.id === part)) {
        throw new CliError(`--select: no item has the id \`${part}\``);
      }
      ids.push(part);
    }
  }
  if (ids.length === 0) throw new CliError("--select names no item");
  return [...new Set(ids)];
}

function itemAt(position: number, items: Item[]): string {
  const item = items[position - 1];
  if (!item) {
    throw new CliError(
      `--select: item ${position} does not exist (the request has ${items.length} item${items.length === 1 ? "" : "s"})`,
    );
  }
  return item.id;
}
