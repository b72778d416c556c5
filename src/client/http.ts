// One HTTP call to the Airlock server: bearer token, JSON in and out, problem details mapped back to
// the engine's errors, network failures and the caller's abort told apart.
import { AirlockError } from "../core/errors.js";
import { invalidOption } from "../core/validate.js";
import {
  type CallSubject,
  errorFromProblem,
  type ProblemBody,
  UnavailableError,
} from "./errors.js";

export interface Transport {
  call<T>(method: string, path: string, options?: CallOptions): Promise<T>;
  readonly baseUrl: string;
}

export interface CallOptions {
  body?: unknown;
  query?: Record<string, string | string[] | number | undefined>;
  headers?: Record<string, string>;
  /** The caller's signal: aborting it rejects with code `aborted`. */
  signal?: AbortSignal;
  /** Gives up on this one call after this long (code `store_unavailable`). */
  timeoutMs: number;
  subject?: CallSubject;
}

export function createTransport(options: {
  url: string;
  token: string;
  fetch: typeof fetch;
}): Transport {
  const baseUrl = normalizeBase(options.url);
  if (!options.token || typeof options.token !== "string") {
    throw invalidOption("token", "the API token (a non-empty string)", options.token);
  }
  const authorization = `Bearer ${options.token}`;

  async function call<T>(method: string, path: string, o: CallOptions): Promise<T> {
    const url = new URL(baseUrl + path);
    for (const [k, v] of Object.entries(o.query ?? {})) {
      if (v === undefined) continue;
      for (const one of Array.isArray(v) ? v : [v]) url.searchParams.append(k, String(one));
    }
    // Our own deadline, linked to the caller's signal by hand: AbortSignal.any would leave a
    // dependent on a caller's long-lived signal for every call.
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(new TimeoutSignal()), o.timeoutMs);
    const onAbort = () => stop.abort(o.signal?.reason);
    if (o.signal?.aborted) onAbort();
    o.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      return await send<T>(method, path, url, o, stop.signal);
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener("abort", onAbort);
    }
  }

  async function send<T>(
    method: string,
    path: string,
    url: URL,
    o: CallOptions,
    signal: AbortSignal,
  ): Promise<T> {
    const headers: Record<string, string> = {
      authorization,
      accept: "application/json, application/problem+json",
      ...o.headers,
    };
    if (o.body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      res = await options.fetch(url, {
        method,
        headers,
        signal,
        ...(o.body === undefined ? {} : { body: JSON.stringify(o.body) }),
      });
    } catch (err) {
      throw networkError(err, o, baseUrl);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw networkError(err, o, baseUrl);
    }
    if (!res.ok) {
      throw errorFromProblem(
        res.status,
        parseJson<ProblemBody>(text),
        o.subject,
        res.headers.get("retry-after"),
      );
    }
    const value = parseJson<T>(text);
    if (value === undefined) {
      throw new UnavailableError(
        `the server answered ${method} ${path} with something other than JSON`,
        {
          status: res.status,
        },
      );
    }
    return value;
  }

  return { baseUrl, call: (method, path, o) => call(method, path, o ?? { timeoutMs: 30_000 }) };
}

function networkError(err: unknown, o: CallOptions, baseUrl: string): AirlockError {
  if (o.signal?.aborted) {
    const reason = o.signal.reason instanceof Error ? o.signal.reason.message : "aborted";
    return new AirlockError("aborted", `the call was aborted: ${reason}`, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  const timedOut = err instanceof TimeoutSignal;
  return new UnavailableError(
    timedOut
      ? `the Airlock server at ${baseUrl} did not answer within ${o.timeoutMs} ms`
      : `cannot reach the Airlock server at ${baseUrl}: ${message}`,
    { cause: err },
  );
}

/** The reason our own per-call deadline aborts with, to tell it from the caller's abort. */
class TimeoutSignal extends Error {
  constructor() {
    super("the call took too long");
    this.name = "TimeoutSignal";
  }
}

function parseJson<T>(text: string): T | undefined {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

function normalizeBase(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidOption("url", "the server's address, like http://127.0.0.1:7420", url);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw invalidOption("url", "an http or https address", url);
  }
  return parsed.href.replace(/\/+$/, "");
}
