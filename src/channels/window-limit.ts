// At most `limit` of something per key in each fixed window of time: audited refusals per channel,
// email answers per address. A window starts at a key's first use after the last one ended (or when
// the clock was set back); what was turned away in a window is told when the next one starts.
export interface WindowLimit {
  /** Counts one for `key` at `at` (ms): whether it fits in the key's current window. */
  take(key: string, at: number): boolean;
}

export interface WindowLimitOptions {
  limit: number;
  windowMs: number;
  /** Keys kept at most: past it, all are forgotten (each then starts a new window), so that many
   * different keys never grow the map without bound. @default 10_000 */
  maxKeys?: number;
  /** Told, when a key's window ends with some turned away, how many were. */
  onDropped?: (key: string, dropped: number) => void;
}

export function windowLimit(o: WindowLimitOptions): WindowLimit {
  const maxKeys = o.maxKeys ?? 10_000;
  const windows = new Map<string, { start: number; count: number; dropped: number }>();
  return {
    take(key, at) {
      let w = windows.get(key);
      if (!w || at - w.start >= o.windowMs || at < w.start) {
        if (w && w.dropped > 0) o.onDropped?.(key, w.dropped);
        if (!w && windows.size >= maxKeys) windows.clear();
        w = { start: at, count: 0, dropped: 0 };
        windows.set(key, w);
      }
      if (w.count >= o.limit) {
        w.dropped += 1;
        return false;
      }
      w.count += 1;
      return true;
    },
  };
}
