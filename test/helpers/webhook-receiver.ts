// A webhook receiver on 127.0.0.1 for tests: records every POST (headers and raw body), checks its
// signature with `verifyWebhook` against each secret it is told about, and answers with what the test
// queued (a status, headers and body, or no answer at all to make the sender time out).
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhook, type WebhookEvent } from "../../src/channels/webhook.js";

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** `"hang"`: read the request and never answer (until the receiver closes). */
export type Planned = Reply | "hang";

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Per secret the receiver knows (by its name in `secrets`): the parsed event when the signature
   * verified, or the verification error's message. */
  verified: Record<string, { ok: true; event: WebhookEvent } | { ok: false; error: string }>;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  received: Received[];
  /** Answers the next requests in order; once used up, answers 200 `{"ok":true}`. */
  reply(...planned: Planned[]): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  secrets: Record<string, string | string[]> = {},
): Promise<WebhookReceiver> {
  const received: Received[] = [];
  const queue: Planned[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const verified: Received["verified"] = {};
      for (const [name, secret] of Object.entries(secrets)) {
        try {
          verified[name] = { ok: true, event: verifyWebhook(secret, req.headers, body) };
        } catch (error) {
          verified[name] = { ok: false, error: (error as Error).message };
        }
      }
      received.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body,
        verified,
      });
      const planned = queue.shift() ?? { status: 200, body: '{"ok":true}' };
      if (planned === "hang") return;
      res.writeHead(planned.status, planned.headers);
      res.end(planned.body ?? "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    reply: (...planned) => {
      queue.push(...planned);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
