// Measures a running `airlock serve` the way people use it with a large backlog: the process's
// start and memory, the inbox's queue and dashboard, and the API's list, cursor pages and title
// search, each timed over real HTTP on loopback (keep-alive) and reported as p99 of bounded tries.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { percentile } from "./figures.js";

const MAIN = fileURLToPath(new URL("../dist/src/cli/main.js", import.meta.url));
export const BENCH_TOKEN = "bench-admin-token-0123456789abcdef";

export interface Served {
  url: string;
  child: ChildProcess;
  /** Spawn to the first healthy `/healthz`, in ms. */
  readyMs: number;
  stop(): Promise<void>;
}

/** Starts `airlock serve` on a free port with `args` and waits (bounded) until it says it serves and
 * `/healthz` answers. */
export async function serve(
  args: string[],
  port: number,
  env: Record<string, string> = {},
): Promise<Served> {
  const start = performance.now();
  const child = spawn(
    process.execPath,
    [MAIN, "serve", "--host", "127.0.0.1", "--port", String(port), "--rate-limit", "off", ...args],
    {
      env: { ...process.env, ...env, AIRLOCK_ADMIN_TOKEN: BENCH_TOKEN, AIRLOCK_LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  // Ready: it printed where it serves (after its admin token is stored), and /healthz answers.
  let serving = false;
  let stdout = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout = (stdout + d.toString()).slice(-4000);
    if (stdout.includes("Airlock is serving at")) serving = true;
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  };
  while (performance.now() - start < 120_000) {
    if (child.exitCode !== null) throw new Error(`airlock serve exited: ${stderr.trim()}`);
    const ok =
      serving &&
      (await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      ));
    if (ok) return { url, child, readyMs: performance.now() - start, stop };
    await new Promise((r) => setTimeout(r, 5));
  }
  await stop();
  throw new Error(`airlock serve was not ready within 120 s: ${stderr.trim()}`);
}

/** The resident set of a process, in MB, from /proc. */
export function rssMb(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

const auth = { authorization: `Bearer ${BENCH_TOKEN}` };

/** Signs in to the inbox with the admin token; returns the session's Cookie header. */
export async function signIn(url: string): Promise<string> {
  const form = await fetch(`${url}/login`);
  const html = await form.text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  const cookie = form.headers.getSetCookie().map((c) => c.split(";")[0]);
  if (!csrf) throw new Error("the login page has no CSRF field");
  const res = await fetch(`${url}/login`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookie.join("; ") },
    body: new URLSearchParams({ token: BENCH_TOKEN, _csrf: csrf, next: "/" }),
  });
  const session = res.headers.getSetCookie().map((c) => c.split(";")[0]);
  if (res.status !== 303 || session.length === 0) throw new Error(`sign-in failed: ${res.status}`);
  return session.join("; ");
}

/** A new reviewer token in one of the generated requests' approver groups (`approversOf`). */
async function reviewerToken(url: string, group: string): Promise<string> {
  const res = await fetch(`${url}/v1/tokens`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({
      name: `reviewer of ${group}`,
      roles: ["reviewer"],
      groups: [group],
    }),
  });
  const body = (await res.json()) as { token?: string };
  if (res.status !== 201 || !body.token) throw new Error(`token not created: ${res.status}`);
  return body.token;
}

/** Times `tries` calls of `call` (each must succeed); returns the p99 and p50 in ms. */
export async function timed(
  tries: number,
  call: (i: number) => Promise<void>,
): Promise<{ p50: number; p99: number }> {
  const ms: number[] = [];
  const deadline = performance.now() + 60_000;
  for (let i = 0; i < tries && performance.now() < deadline; i++) {
    const t = performance.now();
    await call(i);
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 0.5), p99: percentile(ms, 0.99) };
}

export async function getOk(url: string, headers: Record<string, string> = auth): Promise<string> {
  const res = await fetch(url, { headers });
  const body = await res.text();
  if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${body.slice(0, 300)}`);
  return body;
}

interface Page {
  items: { id: string; title: string }[];
  nextCursor?: string;
}

/** The figures for one served database; `words` are title words known to be in it. */
export async function measureServed(
  prefix: string,
  s: Served,
  words: string[],
): Promise<{ name: string; value: number; unit: string }[]> {
  const out: { name: string; value: number; unit: string }[] = [];
  const add = (name: string, value: number, unit = "ms") =>
    out.push({ name: `${prefix}.${name}`, value, unit });
  add("serve_ready_ms", s.readyMs);
  add("serve_rss_mb_ready", rssMb(s.child.pid), "MB");
  const api = `${s.url}/v1/requests`;
  const cookie = await signIn(s.url);

  // Warm-up: the first call of each kind compiles its code path and reads its pages.
  await getOk(`${api}?status=pending`);
  await getOk(`${s.url}/`, { cookie });

  const first = await timed(50, async () => {
    const page = JSON.parse(await getOk(`${api}?status=pending`)) as Page;
    if (page.items.length === 0) throw new Error("no pending request listed");
  });
  add("pending_first_page_p99_ms", first.p99);
  const urgent = await timed(30, async () => {
    await getOk(`${api}?status=pending&order=deadline`);
  });
  add("pending_deadline_first_page_p99_ms", urgent.p99);

  // Later pages: follow the cursor 50 pages deep, newest first and most urgent first.
  for (const order of ["newest", "deadline"] as const) {
    let cursor: string | undefined;
    const page = await timed(50, async () => {
      const q = `${api}?status=pending&order=${order}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const p = JSON.parse(await getOk(q)) as Page;
      if (p.items.length === 0) throw new Error("an empty page");
      // A small database runs out of pages: start again from the first.
      cursor = p.nextCursor;
    });
    add(`pending_cursor_page_${order}_p99_ms`, page.p99);
  }

  const search = await timed(words.length * 3, async (i) => {
    const word = words[i % words.length] as string;
    const scope = i % 3 === 0 ? "" : i % 3 === 1 ? "&status=pending" : "&status=approved";
    await getOk(`${api}?q=${encodeURIComponent(word)}${scope}`);
  });
  add("search_p99_ms", search.p99);
  const rare = await timed(10, async (i) => {
    await getOk(`${api}?q=${encodeURIComponent(`nothing-like-this-${i}`)}`);
  });
  add("search_no_match_p99_ms", rare.p99);
  // The same as a reviewer sees them: scoped to what the reviewer may decide (an approver filter),
  // as the inbox and the API list for every reviewer who is not an admin. One reviewer may decide
  // half the requests, the other one in a hundred (`approversOf`).
  for (const [who, group] of [
    ["reviewer", "bench-reviewers"],
    ["few_reviewer", "bench-few"],
  ] as const) {
    const reviewer = { authorization: `Bearer ${await reviewerToken(s.url, group)}` };
    const queue = await timed(30, async (i) => {
      const order = i % 2 === 0 ? "newest" : "deadline";
      const p = JSON.parse(await getOk(`${api}?status=pending&order=${order}`, reviewer)) as Page;
      if (p.items.length === 0) throw new Error(`no pending request listed for ${group}`);
    });
    add(`${who}_pending_first_page_p99_ms`, queue.p99);
    const scoped = await timed(words.length * 2, async (i) => {
      const word = words[i % words.length] as string;
      const scope = i % 2 === 0 ? "&status=pending" : "";
      await getOk(`${api}?q=${encodeURIComponent(word)}${scope}`, reviewer);
    });
    add(`search_${who}_p99_ms`, scoped.p99);
  }

  const inbox = await timed(30, async () => {
    await getOk(`${s.url}/`, { cookie });
  });
  add("inbox_queue_p99_ms", inbox.p99);
  const fragment = await timed(30, async () => {
    await getOk(`${s.url}/inbox/queue?sort=urgent`, { cookie });
  });
  add("inbox_queue_fragment_p99_ms", fragment.p99);
  const searched = await timed(words.length, async (i) => {
    await getOk(`${s.url}/?q=${encodeURIComponent(words[i] as string)}`, { cookie });
  });
  add("inbox_search_p99_ms", searched.p99);

  const dashboard = await timed(10, async () => {
    await getOk(`${s.url}/dashboard`, { cookie });
  });
  add("dashboard_p99_ms", dashboard.p99);
  add("serve_rss_mb_after", rssMb(s.child.pid), "MB");
  return out;
}
