// Retention: which instant a cutoff names, and a daily prune for long-running servers.
import { InvalidInputError } from "../core/errors.js";
import type { PruneResult, Store } from "../core/store.js";

const DAY_MS = 24 * 60 * 60 * 1000;

/** The instant a `--before` value names: a date (`2026-01-01`, midnight UTC) or a date and time
 * with a zone (`2026-01-01T12:00:00Z`, `…+02:00`). Anything else is invalid_input: a cutoff that
 * means something other than what the operator meant deletes the wrong history. */
export function parseCutoff(text: string): number {
  const t = text.trim();
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(t);
  const withZone = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(
    t,
  );
  const ms = dateOnly || withZone ? Date.parse(dateOnly ? `${t}T00:00:00Z` : t) : Number.NaN;
  // Date.parse rolls 2026-02-30 over to March: compare the date back.
  if (!Number.isFinite(ms) || (dateOnly && new Date(ms).toISOString().slice(0, 10) !== t)) {
    throw new InvalidInputError(
      `Expected \`--before\` to be a date (2026-01-01) or a date and time with a zone (2026-01-01T00:00:00Z), got \`${text}\``,
      "before",
    );
  }
  return ms;
}

/** The cutoff of a retention of `days` days at `now`. */
export function retentionCutoff(days: number, now: number): number {
  return now - days * DAY_MS;
}

export interface RetentionOptions {
  store: Store;
  /** Keep terminal requests for this many days (a positive number). */
  retentionDays: number;
  /** How often to prune. @default one day */
  everyMs?: number;
  /** After each run, with what it removed, or the error it met (the schedule continues). */
  onRun?: (outcome: { result?: PruneResult; error?: Error; before: number }) => void;
  now?: () => number;
}

export interface RetentionSchedule {
  /** Prunes now (also what the timer calls); runs never overlap. */
  runOnce(): Promise<PruneResult | undefined>;
  stop(): Promise<void>;
}

/** Prunes once soon after start and then every `everyMs`, for `airlock serve --retention-days`. */
export function startRetention(o: RetentionOptions): RetentionSchedule {
  if (!Number.isFinite(o.retentionDays) || o.retentionDays <= 0) {
    throw new InvalidInputError(
      `Expected \`retentionDays\` to be a number above 0, got \`${String(o.retentionDays)}\``,
      "retentionDays",
    );
  }
  const prune = o.store.prune?.bind(o.store);
  if (!prune) {
    throw new InvalidInputError(`the ${o.store.kind} store cannot prune`, "retentionDays");
  }
  const now = o.now ?? Date.now;
  let running: Promise<PruneResult | undefined> | undefined;
  let stopped = false;

  function runOnce(): Promise<PruneResult | undefined> {
    if (stopped) return Promise.resolve(undefined);
    running ??= (async () => {
      const before = retentionCutoff(o.retentionDays, now());
      try {
        const result = await prune?.({ before });
        o.onRun?.({ ...(result ? { result } : {}), before });
        return result;
      } catch (err) {
        o.onRun?.({ error: err instanceof Error ? err : new Error(String(err)), before });
        return undefined;
      } finally {
        running = undefined;
      }
    })();
    return running;
  }

  // The first run a minute after start, so that a restart loop does not prune on every start.
  const first = setTimeout(() => void runOnce(), 60_000);
  const timer = setInterval(() => void runOnce(), o.everyMs ?? DAY_MS);
  first.unref();
  timer.unref();
  return {
    runOnce,
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
  };
}
