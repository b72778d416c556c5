// A worker thread running the 64-client load loop (http-client.ts) against a server in the main
// thread: the clients get a thread of their own, as real clients have their own processes, and the
// figure is the server's. Started by bench/http.ts; posts one LoadResult (or an error message) back.
import { parentPort, workerData } from "node:worker_threads";
import { underLoad } from "./http-client.js";

const { url, agent, reviewer } = workerData as { url: string; agent: string; reviewer: string };
try {
  parentPort?.postMessage({ result: await underLoad(url, agent, reviewer) });
} catch (err) {
  parentPort?.postMessage({ error: (err as Error).stack ?? String(err) });
}
