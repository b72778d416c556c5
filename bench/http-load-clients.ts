// A child process running the 64-client load loop (http-client.ts) against a server in the bench's
// process: the clients get a process of their own, as real clients have, and the figure is the
// server's. Started by bench/http.ts, which sends { url, agent, reviewer, sizes } over IPC; answers
// with one LoadResult (or an error message) and exits.
import { type LoadSizes, underLoad } from "./http-client.js";

process.once("message", (m: { url: string; agent: string; reviewer: string; sizes: LoadSizes }) => {
  underLoad(m.url, m.agent, m.reviewer, m.sizes)
    .then(
      (result) => process.send?.({ result }),
      (err: Error) => process.send?.({ error: err.stack ?? String(err) }),
    )
    .finally(() => process.disconnect?.());
});
