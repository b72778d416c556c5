// Listening and graceful shutdown. `close()` stops accepting connections, tells long-polls and
// event streams to finish (long-polls answer with the request as it is then), lets answers in
// flight complete, and after a grace period cuts whatever is left. Safe to call twice.

import { setMaxListeners } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { createAdaptorServer, type HttpBindings } from "@hono/node-server";
import type { Logger } from "pino";

export interface ListenOptions {
  /** 0 picks a free port. @default 7420 */
  port?: number;
  /** @default "127.0.0.1" */
  host?: string;
}

export interface Listening {
  url: string;
  host: string;
  port: number;
}

export interface Lifecycle {
  listen(options?: ListenOptions): Promise<Listening>;
  /** Stops the server; resolves once every connection is closed. */
  close(): Promise<void>;
  readonly closing: boolean;
  /** Aborted when closing starts. */
  readonly shutdown: AbortSignal;
}

const POLL_MS = 20;

export function createLifecycle(options: {
  /** Receives node's bindings (`incoming`, `outgoing`) as its second argument. */
  fetch: (request: Request, env: HttpBindings) => Response | Promise<Response>;
  logger: Logger;
  graceMs: number;
  onClose: () => void;
}): Lifecycle {
  const controller = new AbortController();
  // Every long-poll and event stream in flight listens to it (and stops listening when it ends), so
  // hundreds of listeners are normal, not a leak.
  setMaxListeners(0, controller.signal);
  let server: Server | undefined;
  let tracker: ConnectionTracker | undefined;
  let closing: Promise<void> | undefined;

  return {
    get closing() {
      return controller.signal.aborted;
    },
    shutdown: controller.signal,

    async listen({ port = 7420, host = "127.0.0.1" } = {}) {
      if (server) throw new Error("this server is already listening");
      if (controller.signal.aborted) throw new Error("this server is closed");
      // Without `createServer` options the bindings are node:http's, as `fetch` expects.
      const fetch = options.fetch as (request: Request, env: unknown) => Promise<Response>;
      const s = createAdaptorServer({ fetch, hostname: host }) as Server;
      server = s;
      tracker = trackConnections(s);
      await new Promise<void>((resolve, reject) => {
        s.once("error", reject);
        s.listen(port, host, () => {
          s.off("error", reject);
          resolve();
        });
      });
      const address = s.address() as AddressInfo;
      const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
      return { host: address.address, port: address.port, url: `http://${shown}:${address.port}` };
    },

    close() {
      closing ??= (async () => {
        controller.abort(new Error("the server is shutting down"));
        options.onClose();
        const s = server;
        if (!s?.listening) return;
        const closed = new Promise<void>((resolve) => s.close(() => resolve()));
        const deadline = Date.now() + options.graceMs;
        let done = false;
        void closed.then(() => {
          done = true;
        });
        // Connections are closed as soon as they are idle (kept alive, or opened and never used);
        // busy ones finish their answer first.
        while (!done && Date.now() < deadline) {
          tracker?.closeIdle();
          await Promise.race([closed, sleep(POLL_MS)]);
        }
        if (!done) {
          options.logger.warn(
            { grace_ms: options.graceMs },
            "connections still open after the grace period; closing them",
          );
          s.closeAllConnections();
          await closed;
        }
      })();
      return closing;
    },
  };
}

interface ConnectionTracker {
  closeIdle(): void;
}

/** Knows which connections are answering a request. Node's own closeIdleConnections() leaves
 * connections that were opened but never carried a request (clients pre-connect) until their
 * headers timeout; this closes those too. */
function trackConnections(server: Server): ConnectionTracker {
  const active = new Map<Socket, number>();
  server.on("connection", (socket: Socket) => {
    active.set(socket, 0);
    socket.once("close", () => active.delete(socket));
  });
  server.on("request", (req, res) => {
    const socket = req.socket;
    active.set(socket, (active.get(socket) ?? 0) + 1);
    res.once("close", () => {
      const n = active.get(socket);
      if (n !== undefined) active.set(socket, Math.max(0, n - 1));
    });
  });
  return {
    closeIdle() {
      for (const [socket, inFlight] of active) if (inFlight === 0) socket.destroy();
    },
  };
}
