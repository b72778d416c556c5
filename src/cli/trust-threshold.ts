// `airlock serve --trust-threshold N`: approvals by people in a row before the inbox suggests a
// learned trust rule (src/policy/learned-trust.ts); 0 turns suggestions off.
import { CliError } from "./context.js";

export function trustThresholdFlag(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n)) {
    throw new CliError(
      `--trust-threshold expects a whole number from 0 up (0 turns suggestions off), got \`${value}\``,
    );
  }
  return n;
}
