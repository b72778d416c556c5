// A child process running the 64-client load loop (http-client.ts) against servers in the bench's
// process: the clients get a process of their own, as real clients have, and the figure is the
// server's. Started by bench/http.ts, which sends { url, agent, reviewer, sizes } over IPC for each
// load (Airlock's server and the bare one in turn); answers each with one LoadResult (or an error
// message), and exits on { stop: true } or when the bench goes away.
import { type LoadSizes, underLoad } from "./http-client.js";

type Order = { url: string; agent: string; reviewer: string; sizes: LoadSizes } | { stop: true };

process.on("message", (m: Order) => {
  if ("stop" in m) {
    process.exit(0);
  }
  underLoad(m.url, m.agent, m.reviewer, m.sizes).then(
    (result) => process.send?.({ result }),
    (err: Error) => process.send?.({ error: err.stack ?? String(err) }),
  );
});
process.on("disconnect", () => process.exit(0));
