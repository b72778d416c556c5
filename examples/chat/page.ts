// The chat page: plain HTML and a few lines of script, no framework and no build. Quick approvals
// appear inline as <airlock-approval> cards (the script comes from the Airlock server itself); full
// ones link to the inbox. Messages are added with textContent only.
export function chatPage(airlockUrl: string): string {
  const base = airlockUrl.replace(/[&"<>]/g, "");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Chat with inline approvals</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; max-width: 44rem; margin: 2rem auto; padding: 0 1rem; color: #1d2330; }
  #log > div { margin: .6rem 0; }
  .me { text-align: right; } .me span { background: #2456d6; color: #fff; padding: .3rem .7rem; border-radius: 1rem; display: inline-block; }
  .bot { color: #1d2330; }
  button { font: inherit; padding: .4rem .8rem; margin-right: .4rem; }
</style>
<script src="${base}/embed/airlock-approval.js" defer></script>
</head>
<body>
<h1>Assistant</h1>
<p>Ask the agent to do something. Quick approvals appear right here; full reviews go to the inbox.</p>
<p>
  <button id="ask-expense" type="button">Pay the team lunch (quick)</button>
  <button id="ask-contract" type="button">Sign the big contract (full)</button>
</p>
<div id="log" aria-live="polite"></div>
<script>
  const log = document.getElementById("log");
  function say(who, text) {
    const row = document.createElement("div");
    row.className = who;
    const bubble = document.createElement("span");
    bubble.textContent = text;
    row.append(bubble);
    log.append(row);
    return row;
  }
  async function result(call, id) {
    for (let i = 0; i < 200; i++) {
      const res = await fetch("/api/result?call=" + call + "&id=" + encodeURIComponent(id));
      const body = await res.json();
      if (!body.pending) return body.result;
    }
    return { note: "still waiting" };
  }
  async function ask(call) {
    const res = await fetch("/api/chat?call=" + call, { method: "POST" });
    const reply = await res.json();
    say("me", reply.say);
    if (reply.done) { say("bot", "Done: " + JSON.stringify(reply.done)); return; }
    if (reply.level === "quick") {
      const row = say("bot", "This needs your quick approval:");
      const card = document.createElement("airlock-approval");
      card.setAttribute("base-url", ${JSON.stringify(base)});
      card.setAttribute("request-id", reply.requestId);
      card.setAttribute("token", reply.token);
      row.append(card);
    } else {
      const row = say("bot", "This needs a full review; it is waiting in the review queue: ");
      const link = document.createElement("a");
      link.href = reply.inboxUrl;
      link.target = "_blank";
      link.textContent = "open in the inbox";
      row.append(link);
    }
    const outcome = await result(call, reply.requestId);
    say("bot", "Result: " + JSON.stringify(outcome));
  }
  document.getElementById("ask-expense").addEventListener("click", () => ask("expense"));
  document.getElementById("ask-contract").addEventListener("click", () => ask("contract"));
</script>
</body>
</html>`;
}
