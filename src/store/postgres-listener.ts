// Cross-process change signals for the PostgreSQL store: one dedicated connection that LISTENs on
// the schema's channel while anybody is listening. Writers NOTIFY from their own transaction, so a
// signal arrives only after the change is committed and never for a rolled-back one.
//
// A dropped connection is re-established with backoff. NOTIFY is not queued for absent listeners, so
// after every (re)connect the listeners are called once: the engine then re-reads the audit log from
// where it was, which covers whatever was committed while nobody was listening.
import type { ClientBase, Notification } from "pg";

export interface ListenConnection {
  client: ClientBase;
  /** Gives the connection up for good (it is never reused: it holds LISTEN state). */
  release(): Promise<void>;
}

export interface ChangeListenerOptions {
  connect(): Promise<ListenConnection>;
  /** The already-quoted channel identifier for LISTEN. */
  channelIdent: string;
  /** The channel name as notifications report it. */
  channel: string;
  /** Notifications carrying this payload came from our own store object and are ignored. */
  selfId: string;
  /** Close the connection this long after the last listener left (the next one reopens it). */
  idleMs: number;
  minBackoffMs: number;
  maxBackoffMs: number;
  onError(err: unknown): void;
}

export interface ChangeListener {
  add(listener: () => void): () => void;
  close(): Promise<void>;
}

export function createChangeListener(o: ChangeListenerOptions): ChangeListener {
  const listeners = new Set<() => void>();
  let conn: ListenConnection | undefined;
  let connecting: Promise<void> | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let failures = 0;
  let closed = false;

  function callAll() {
    for (const l of [...listeners]) {
      try {
        l();
      } catch (err) {
        o.onError(err);
      }
    }
  }

  function onNotification(msg: Notification) {
    if (msg.channel !== o.channel || msg.payload === o.selfId) return;
    callAll();
  }

  function ensure() {
    if (closed || conn || connecting || retryTimer || listeners.size === 0) return;
    connecting = open().finally(() => {
      connecting = undefined;
    });
  }

  async function open() {
    let c: ListenConnection | undefined;
    try {
      c = await o.connect();
      const current = c;
      let lostEarly: Error | undefined;
      const lost = (err?: Error) => {
        lostEarly ??= err ?? new Error("the LISTEN connection ended");
        dropped(current, err);
      };
      c.client.on("notification", onNotification);
      c.client.on("error", lost);
      c.client.on("end", () => lost());
      await c.client.query(`LISTEN ${o.channelIdent}`);
      // The connection may have ended right after answering LISTEN, before we got here.
      if (lostEarly) throw lostEarly;
      if (closed || listeners.size === 0) {
        await c.release().catch(() => {});
        return;
      }
      conn = c;
      failures = 0;
      // Whatever was committed before LISTEN took effect raised no signal for us: re-read now.
      callAll();
    } catch (err) {
      if (c) await c.release().catch(() => {});
      o.onError(err);
      retry();
    }
  }

  function dropped(c: ListenConnection, err?: Error) {
    if (conn !== c) return; // an old connection's late event, or the open() that failed handles it
    conn = undefined;
    void c.release().catch(() => {});
    if (closed) return;
    o.onError(err ?? new Error("the LISTEN connection ended"));
    retry();
  }

  function retry() {
    if (closed || listeners.size === 0 || retryTimer) return;
    const base = Math.min(o.maxBackoffMs, o.minBackoffMs * 2 ** failures);
    failures++;
    // Jitter, so processes that lost the database together don't all come back in one instant.
    const delay = base / 2 + Math.random() * (base / 2);
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      ensure();
    }, delay);
  }

  function scheduleIdleClose() {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      idleTimer = undefined;
      if (listeners.size > 0 || !conn) return;
      const c = conn;
      conn = undefined;
      void c.release().catch(() => {});
    }, o.idleMs);
    // The timer alone keeps no process alive (the open connection does, until this closes it).
    idleTimer.unref();
  }

  return {
    add(listener) {
      if (closed) return () => {};
      // A new function object each time, so adding the same listener twice counts twice.
      const entry = () => listener();
      listeners.add(entry);
      if (idleTimer) {
        clearTimeout(idleTimer);
        idleTimer = undefined;
      }
      ensure();
      return () => {
        if (!listeners.delete(entry)) return;
        if (listeners.size === 0 && !closed) {
          if (retryTimer) {
            clearTimeout(retryTimer);
            retryTimer = undefined;
          }
          scheduleIdleClose();
        }
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      listeners.clear();
      if (retryTimer) clearTimeout(retryTimer);
      if (idleTimer) clearTimeout(idleTimer);
      retryTimer = undefined;
      idleTimer = undefined;
      await connecting?.catch(() => {});
      const c = conn;
      conn = undefined;
      if (c) await c.release().catch(() => {});
    },
  };
}
