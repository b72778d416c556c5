// The bench's HTTP client and its 64-client load loop, shared by bench/http.ts and the child process
// that runs the same loop beside the server (bench/http-load-clients.ts).
import http from "node:http";
import { bounded } from "./figures.js";

export const LOAD_CLIENTS = 64;

/** Gate cycles of the 64-client load at most (all clients together), and its bound in time. */
export interface LoadSizes {
  cycles: number;
  maxMs: number;
}
export const FULL_LOAD: LoadSizes = { cycles: 3_000, maxMs: 8_000 };

// node:http with a keep-alive agent rather than fetch: fetch's streams cost the client more than the
// server spends answering, and the clients may share the server's process.
const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });

export function json(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  retried = false,
): Promise<unknown> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise<unknown>((resolve, reject) => {
    const req = http.request(
      url + path,
      {
        method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          ...(payload === undefined
            ? {}
            : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          try {
            const value: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300) {
              reject(new Error(`${method} ${path}: ${status} ${JSON.stringify(value)}`));
            } else resolve(value);
          } catch (err) {
            reject(err);
          }
        });
        res.on("error", reject);
      },
    );
    req.on("error", (err: NodeJS.ErrnoException) => {
      // A kept-alive socket the server closed for idleness just as this request was written on it:
      // the server never read the request, so it is sent once more (Node's documented remedy).
      if (req.reusedSocket && err.code === "ECONNRESET" && !retried) {
        resolve(json(url, token, method, path, body, true));
      } else reject(new Error(`${method} ${path}: ${err.message}`, { cause: err }));
    });
    req.end(payload);
  });
}

export interface LoadResult {
  opsPerS: number;
  /** Creates + decisions, and the ms they took. */
  ops: number;
  ms: number;
  /** decide sent → that gate's long-poll answered, ms, sorted. */
  latencies: number[];
}

/** LOAD_CLIENTS clients, each in a loop: create a gate, start its long-poll, decide it, and wait for
 * the long-poll's answer. Returns creates + decisions per second and the decide → answer latencies. */
export async function underLoad(
  url: string,
  agentToken: string,
  reviewerToken: string,
  sizes: LoadSizes = FULL_LOAD,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let ops = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: LOAD_CLIENTS }, () =>
      bounded(Math.ceil(sizes.cycles / LOAD_CLIENTS), sizes.maxMs, async () => {
        const r = (await json(url, agentToken, "POST", "/v1/requests", { title: "load" })) as {
          id: string;
        };
        let answeredAt = 0;
        const waiting = json(url, agentToken, "GET", `/v1/requests/${r.id}/wait?timeout=30`).then(
          (w) => {
            answeredAt = performance.now();
            if ((w as { status: string }).status !== "approved") throw new Error("not approved");
          },
        );
        const sentAt = performance.now();
        await json(url, reviewerToken, "POST", `/v1/requests/${r.id}/decisions`, {
          outcome: "approved",
        });
        await waiting;
        // A long-poll answered before the decision was sent (it raced ahead) counts as 0.
        latencies.push(Math.max(0, answeredAt - sentAt));
        ops += 2;
      }),
    ),
  );
  latencies.sort((a, b) => a - b);
  const ms = performance.now() - start;
  return { opsPerS: (ops / ms) * 1000, ops, ms, latencies };
}

/** Several loads' results as one: their operations over their time, their latencies together. */
export function pooled(results: readonly LoadResult[]): LoadResult {
  const ops = results.reduce((s, r) => s + r.ops, 0);
  const ms = results.reduce((s, r) => s + r.ms, 0);
  const latencies = results.flatMap((r) => r.latencies).sort((a, b) => a - b);
  return { opsPerS: (ops / ms) * 1000, ops, ms, latencies };
}
