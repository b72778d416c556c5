// Pending quotas per requester (`PendingQuota`), as every store checks them inside the insert's
// transaction: the rule in one place, the atomicity in each store.
import { QuotaExceededError } from "./errors.js";
import type { PendingQuota } from "./store.js";
import { expectPositiveInt } from "./validate.js";

/** Refuses a quota that is not two positive integers (code `invalid_input`). */
export function checkPendingQuota(quota: PendingQuota): void {
  expectPositiveInt("quota.count", quota.count);
  expectPositiveInt("quota.bytes", quota.bytes);
}

/** The refusal of a new pending request of `requestBytes` bytes when `requester` already has
 * `usage` pending; undefined when it fits. */
export function quotaRefusal(
  requester: string,
  usage: { count: number; bytes: number },
  requestBytes: number,
  quota: PendingQuota,
): QuotaExceededError | undefined {
  const seen = { requester, pending: usage.count, pendingBytes: usage.bytes, requestBytes };
  if (usage.count + 1 > quota.count) {
    return new QuotaExceededError({ ...seen, limit: "count", max: quota.count });
  }
  if (usage.bytes + requestBytes > quota.bytes) {
    return new QuotaExceededError({ ...seen, limit: "bytes", max: quota.bytes });
  }
  return undefined;
}
