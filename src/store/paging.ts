/** The most rows one page of a listing returns. */
export const MAX_PAGE = 500;

/** A page size within 1..MAX_PAGE; 50 when none is asked for. */
export function clampLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return 50;
  return Math.min(Math.max(Math.trunc(limit), 1), MAX_PAGE);
}
