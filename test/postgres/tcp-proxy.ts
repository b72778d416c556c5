// A loopback TCP proxy in front of PostgreSQL, to take the database away and bring it back, or to cut
// a connection at an exact moment (when the client sends a given statement), without touching the
// server itself.
import net from "node:net";

export interface Proxy {
  readonly port: number;
  /** `url` with its port replaced by the proxy's. */
  url(url: string): string;
  /** Refuses new connections and cuts every open one. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  /** The next client chunk containing `marker` is dropped and its connection cut. Resolves when it
   * happened. */
  cutWhen(marker: string): Promise<void>;
  /** How many connections the proxy has accepted. */
  readonly accepted: number;
}

export async function startProxy(targetPort: number, targetHost = "127.0.0.1"): Promise<Proxy> {
  const sockets = new Set<net.Socket>();
  let cut: { marker: Buffer; done: () => void } | undefined;
  let accepted = 0;
  const server = net.createServer((client) => {
    accepted++;
    const upstream = net.connect(targetPort, targetHost);
    sockets.add(client);
    sockets.add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("data", (chunk: Buffer) => {
      if (cut && chunk.includes(cut.marker)) {
        const done = cut.done;
        cut = undefined;
        close();
        done();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
    client.on("error", close);
    upstream.on("error", close);
    client.on("close", close);
    upstream.on("close", close);
  });
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        port = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  await listen();
  return {
    get port() {
      return port;
    },
    get accepted() {
      return accepted;
    },
    url(url) {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of [...sockets]) s.destroy();
      sockets.clear();
      await closed;
    },
    start: listen,
    cutWhen(marker) {
      return new Promise<void>((resolve) => {
        cut = { marker: Buffer.from(marker), done: resolve };
      });
    },
  };
}
