// The bench's command line: `node --import tsx bench/index.ts [suite…] [--quick] [--check]
// [--write-baseline [--from RUN…]]` (through npm: `npm run bench -- --check`).

export interface BenchArgs {
  /** Suites named on the command line (none: every suite, or with --quick every suite that has a
   * short mode). */
  suites: string[];
  /** Each suite in its short mode; implied by --check and --write-baseline. */
  quick: boolean;
  /** Compare the guarded ratios with bench/baseline.json; exit 1 when one is more than 15 % worse. */
  check: boolean;
  /** Write bench/baseline.json from this run, or from the saved runs of --from. */
  writeBaseline: boolean;
  /** Saved outputs of --check runs to take the baseline's medians from (no suite runs). */
  from: string[];
}

export const USAGE =
  "usage: bench/index.ts [suite…] [--quick] [--check] [--write-baseline [--from RUN…]]";

/** Parses the arguments; throws with a sentence (and the usage) for anything it does not know. */
export function parseArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = {
    suites: [],
    quick: false,
    check: false,
    writeBaseline: false,
    from: [],
  };
  let files = false;
  for (const a of argv) {
    if (a === "--quick") args.quick = true;
    else if (a === "--check") args.check = true;
    else if (a === "--write-baseline") args.writeBaseline = true;
    else if (a === "--from") files = true;
    else if (a.startsWith("-")) throw new Error(`unknown option ${a}\n${USAGE}`);
    else if (files) args.from.push(a);
    else args.suites.push(a);
  }
  if (files && args.from.length === 0) throw new Error(`--from needs the saved runs\n${USAGE}`);
  if (args.from.length > 0 && !args.writeBaseline) {
    throw new Error(`--from only goes with --write-baseline\n${USAGE}`);
  }
  if (args.from.length > 0 && (args.suites.length > 0 || args.check)) {
    throw new Error(`--write-baseline --from runs no suite; name the saved runs only\n${USAGE}`);
  }
  if (args.check || args.writeBaseline) args.quick = true;
  return args;
}
