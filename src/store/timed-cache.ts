// Values a store reads now and then and keeps a while: the newest titles (a search's estimate of
// how common a text is) and a reviewer's count of rows in the approver index. Each is only a
// guide to the cheaper way of reading, never part of an answer, so a stale one costs speed at most.

/** Keeps each key's value `maxAgeMs` after it was read; past `maxKeys` keys, forgets them all (a
 * bound, not an LRU: the keys are few in use). */
export function timedCache<V>(maxAgeMs: number, maxKeys = 1000) {
  const known = new Map<string, { at: number; value: V }>();
  return {
    /** The value kept for `key`, or `read()`'s (kept from now on). */
    get(key: string, now: number, read: () => V): V {
      const k = known.get(key);
      if (k && now - k.at <= maxAgeMs) return k.value;
      if (known.size >= maxKeys) known.clear();
      const value = read();
      known.set(key, { at: now, value });
      return value;
    },
    /** Forgets `key` if it still holds `value` (a read that failed, say). */
    forget(key: string, value: V): void {
      if (known.get(key)?.value === value) known.delete(key);
    },
  };
}

/** A promise kept by `cache` that is forgotten when it fails, so the next call reads again. */
export function keptUnlessFailed<T>(
  cache: ReturnType<typeof timedCache<Promise<T>>>,
  key: string,
  now: number,
  read: () => Promise<T>,
): Promise<T> {
  return cache.get(key, now, () => {
    const p = read();
    p.catch(() => cache.forget(key, p));
    return p;
  });
}
