// The <airlock-approval> custom element, served as one framework-free script at
// GET /embed/airlock-approval.js (no CDN, no build step on the app's side):
//
//   <script src="https://airlock.example.com/embed/airlock-approval.js" defer></script>
//   <airlock-approval request-id="req_..." token="ale_..."></airlock-approval>
//
// It renders in a shadow DOM (the page's styles do not leak in, nor its own out), builds every node
// with textContent (never innerHTML of request data: titles, summaries and args come from agents),
// talks only to the /v1/embed/requests/{id} routes with its embed token, follows the request live
// through the long-poll, and fires `airlock-change` (every new state) and `airlock-decided` (once
// the request is final) events with `detail.request`. `base-url` defaults to the origin the script
// was loaded from.
//
// Kept as a string (ES2017, no template literals inside) so it is served as written, whatever
// compiles the package.
import { argsJson } from "../../channels/view-fit.js";
import { type DoorLabels, doorLabels } from "../../core/labels.js";
import { type ReviewView, reviewViewOf, viewDigestOf } from "../../core/review-view.js";
import type { ApprovalRequest } from "../../core/schemas.js";

/** Whether the card sends `viewDigest` with its decisions. The card's decision route
 * (server/routes/embed.ts, `embedDecisionBody`) must take the field first: until it does, the card
 * shows the view and its digest but sends none (a strict body would refuse the decision). */
export const CARD_SENDS_VIEW_DIGEST = true;

/** What the card fetches: the request; its review view (core/review-view.ts: the agent's words, the
 * exact args) with the args as canonical pretty-printed JSON and the view's digest, which the card
 * sends back with a decision when `sendsViewDigest`; and its buttons' words as every door shows
 * them (core/labels.ts), so no rule is restated in browser code. */
export type CardRequest = ApprovalRequest & {
  buttons: DoorLabels;
  view: ReviewView;
  viewDigest: string;
  argsText: string;
  sendsViewDigest: boolean;
};

export function cardRequest(request: ApprovalRequest): CardRequest {
  const view = reviewViewOf(request);
  return {
    ...request,
    buttons: doorLabels(request),
    view,
    viewDigest: viewDigestOf(request),
    argsText: argsJson(view.args),
    sendsViewDigest: CARD_SENDS_VIEW_DIGEST,
  };
}

export const APPROVAL_CARD_JS = String.raw`/* airlock-approval: the embeddable approval card */
(function () {
  "use strict";
  if (typeof customElements === "undefined" || customElements.get("airlock-approval")) return;
  var scriptOrigin = "";
  try { scriptOrigin = new URL(document.currentScript.src).origin; } catch (e) { scriptOrigin = ""; }

  var STYLE = [
    ":host { display:block; font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; color:#1d2330; }",
    ".card { border:1px solid #dde1e8; border-radius:10px; padding:.8rem 1rem; background:#fff; max-width:40rem; }",
    "h3 { margin:0 0 .3rem; font-size:1rem; }",
    ".meta { color:#5b6475; font-size:.8rem; margin-bottom:.4rem; }",
    ".summary { white-space:pre-wrap; margin:.3rem 0; }",
    ".label { color:#5b6475; font-size:.8rem; margin-top:.4rem; }",
    "pre { background:#f6f7f9; border:1px solid #dde1e8; border-radius:6px; padding:.5rem; overflow:auto; max-height:16rem; font: 12px/1.4 ui-monospace, Menlo, monospace; margin:.4rem 0; }",
    ".add { background:#e6f6ec; color:#0b5c35; display:block; } .del { background:#fdecec; color:#8c1d18; display:block; }",
    "ul { list-style:none; padding:0; margin:.4rem 0; } li { margin:.15rem 0; } .detail { color:#5b6475; font-size:.85em; }",
    ".countdown { font-size:.85rem; color:#5b6475; } .countdown.overdue { color:#b42318; font-weight:600; }",
    "textarea { width:100%; box-sizing:border-box; min-height:2.5rem; font:inherit; margin:.4rem 0; padding:.3rem .4rem; border:1px solid #dde1e8; border-radius:6px; }",
    ".buttons { display:flex; gap:.4rem; flex-wrap:wrap; }",
    "button { font:inherit; padding:.35rem .8rem; border-radius:6px; border:1px solid #dde1e8; background:#fff; cursor:pointer; }",
    "button:disabled { opacity:.5; cursor:default; }",
    "button.approve { background:#13795b; border-color:#13795b; color:#fff; } button.reject { background:#b42318; border-color:#b42318; color:#fff; } button.revise { color:#a15c07; border-color:#a15c07; }",
    ".status { font-weight:600; margin-top:.4rem; } .status.approved { color:#13795b; } .status.rejected, .status.timed_out, .status.cancelled { color:#b42318; } .status.revise { color:#a15c07; }",
    ".error { color:#b42318; margin-top:.4rem; }"
  ].join("\n");

  var FINAL_TEXT = { approved: "Approved", rejected: "Rejected", revise: "Revision requested", timed_out: "Timed out", cancelled: "Cancelled" };

  function node(tag, className, text) {
    var n = document.createElement(tag);
    if (className) n.className = className;
    if (text !== undefined && text !== null) n.textContent = String(text);
    return n;
  }

  function duration(ms) {
    var s = Math.max(0, Math.floor(ms / 1000));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    return (h ? h + "h " : "") + (h || m ? m + "m " : "") + r + "s";
  }

  function sleep(ms, signal) {
    return new Promise(function (resolve) {
      var t = setTimeout(resolve, ms);
      signal.addEventListener("abort", function () { clearTimeout(t); resolve(); }, { once: true });
    });
  }

  class AirlockApproval extends HTMLElement {
    static get observedAttributes() { return ["request-id", "token", "base-url"]; }

    constructor() {
      super();
      this._root = this.attachShadow({ mode: "open" });
      var style = node("style");
      style.textContent = STYLE;
      this._card = node("div", "card");
      this._card.setAttribute("part", "card");
      this._root.append(style, this._card);
      this._run = null;
      this._timer = null;
      this.request = null;
    }

    connectedCallback() { this._start(); }
    disconnectedCallback() { this._stop(); }
    attributeChangedCallback() { if (this.isConnected) { this._stop(); this._start(); } }

    get _base() {
      var b = this.getAttribute("base-url") || scriptOrigin || location.origin;
      return b.replace(/\/+$/, "");
    }

    _url(suffix) {
      return this._base + "/v1/embed/requests/" + encodeURIComponent(this.getAttribute("request-id") || "") + suffix;
    }

    async _call(method, suffix, body, signal) {
      var headers = { authorization: "Bearer " + (this.getAttribute("token") || "") };
      if (body !== undefined) headers["content-type"] = "application/json";
      var res = await fetch(this._url(suffix), {
        method: method, headers: headers, signal: signal, cache: "no-store",
        body: body === undefined ? undefined : JSON.stringify(body)
      });
      var data = null;
      try { data = await res.json(); } catch (e) { data = null; }
      if (!res.ok) {
        var err = new Error((data && data.detail) || ("HTTP " + res.status));
        err.status = res.status;
        err.request = data && data.request;
        throw err;
      }
      return data;
    }

    _stop() {
      if (this._run) this._run.abort();
      this._run = null;
      if (this._timer) clearInterval(this._timer);
      this._timer = null;
    }

    _start() {
      if (!this.getAttribute("request-id") || !this.getAttribute("token")) {
        this._error("set request-id and token");
        return;
      }
      var run = new AbortController();
      this._run = run;
      this._setStatus("loading");
      this._follow(run.signal);
    }

    /** Reads the request, then long-polls while it is pending; ends when the element leaves the
     * page, the request is final, or the token is refused. */
    async _follow(signal) {
      var backoff = 1000;
      var first = true;
      while (!signal.aborted) {
        try {
          var r = await this._call("GET", first ? "" : "/wait?timeout=25", undefined, signal);
          first = false;
          backoff = 1000;
          if (signal.aborted) return;
          this._show(r);
          if (r.status !== "pending") return;
        } catch (e) {
          if (signal.aborted) return;
          this._error(e.message);
          if (e.status === 401 || e.status === 403 || e.status === 404) { this._setStatus("error"); return; }
          await sleep(backoff, signal);
          backoff = Math.min(backoff * 2, 30000);
        }
      }
    }

    _setStatus(status) {
      this.setAttribute("status", status);
    }

    _error(text) {
      var old = this._root.querySelector(".error");
      if (old) old.remove();
      var e = node("div", "error", text);
      e.setAttribute("role", "alert");
      this._card.append(e);
    }

    _show(r) {
      var before = this.request;
      this.request = r;
      this._render(r);
      this._setStatus(r.status);
      if (!before || before.status !== r.status || before.version !== r.version) {
        this.dispatchEvent(new CustomEvent("airlock-change", { detail: { request: r }, bubbles: true, composed: true }));
        if (r.status !== "pending") {
          this.dispatchEvent(new CustomEvent("airlock-decided", { detail: { request: r }, bubbles: true, composed: true }));
        }
      }
    }

    _render(r) {
      var self = this;
      var card = this._card;
      var typed = card.querySelector("textarea");
      var comment = typed ? typed.value : "";
      var ticked = null;
      if (card.querySelector("input[type=checkbox]")) {
        ticked = new Set(Array.prototype.map.call(card.querySelectorAll("input[type=checkbox]:checked"), function (b) { return b.value; }));
      }
      card.replaceChildren();
      if (this._timer) { clearInterval(this._timer); this._timer = null; }

      card.append(node("h3", "title", r.title));
      var meta = [r.action];
      if (r.risk) meta.push("risk " + r.risk);
      if (r.requester) meta.push("asked by " + r.requester);
      card.append(node("div", "meta", meta.join(" \u00b7 ")));
      // The review view the server computed: the agent's words, labelled as such, and the exact
      // arguments (what runs if approved), whatever the preview says.
      var view = r.view || {};
      var said = view.agentSummary !== undefined ? view.agentSummary : r.summary;
      if (said) {
        card.append(node("div", "label", "The agent says:"));
        card.append(node("div", "summary", said));
      }
      var argsText = r.argsText || (r.args && Object.keys(r.args).length ? JSON.stringify(r.args, null, 2) : "");
      if (argsText && argsText !== "{}") {
        card.append(node("div", "label", "Exact arguments (what runs if approved):"));
        card.append(node("pre", "args", argsText));
      }

      if (r.preview) {
        var pre = node("pre", "diff");
        r.preview.split("\n").forEach(function (line) {
          var cls = /^\+(?!\+\+)/.test(line) ? "add" : /^-(?!--)/.test(line) ? "del" : "";
          var span = node("span", cls, line);
          pre.append(span, cls ? "" : "\n");
        });
        card.append(pre);
      }

      var pending = r.status === "pending";
      var allowed = r.allowed || [];
      var selectable = pending && allowed.indexOf("select") >= 0;
      if (r.items && r.items.length) {
        var list = node("ul", "items");
        r.items.forEach(function (item) {
          var li = node("li");
          var row = node("label");
          if (selectable) {
            var box = node("input");
            box.type = "checkbox";
            box.value = item.id;
            box.checked = ticked ? ticked.has(item.id) : true;
            row.append(box, " ");
          }
          row.append(node("span", "label", item.label));
          li.append(row);
          if (item.detail) li.append(" ", node("span", "detail", item.detail));
          list.append(li);
        });
        card.append(list);
      }

      if (pending) {
        if (r.deadline) {
          var countdown = node("div", "countdown");
          countdown.setAttribute("aria-live", "off");
          var tick = function () {
            var left = r.deadline - Date.now();
            countdown.textContent = left > 0 ? "Decide within " + duration(left) : "The deadline has passed";
            countdown.classList.toggle("overdue", left <= 0);
          };
          tick();
          this._timer = setInterval(tick, 1000);
          card.append(countdown);
        }
        var area = node("textarea");
        area.setAttribute("aria-label", "comment");
        area.placeholder = r.revisionCommentRequired ? "Comment (required to ask for a revision)" : "Comment (optional)";
        area.value = comment;
        card.append(area);
        var buttons = node("div", "buttons");
        // The server words the buttons (one rule for every door: the verb first, an agent's label
        // after it unless it inverts it); without its words, the bare verbs. r.labels is never read.
        var words = r.buttons || {};
        if (allowed.indexOf("approve") >= 0 || allowed.indexOf("select") >= 0) {
          buttons.append(this._button("approve", words.approve || "Approve", function () { return self._approve(); }));
        }
        // Rejecting is always offered: whoever may decide may reject, whatever "allowed" says.
        buttons.append(this._button("reject", words.reject || "Reject", function () { return self._decide({ outcome: "rejected" }); }));
        if (allowed.indexOf("revise") >= 0) {
          buttons.append(this._button("revise", words.revise || "Revise", function () { return self._decide({ outcome: "revise" }); }));
        }
        card.append(buttons);
      } else {
        var d = r.decision || {};
        var text = FINAL_TEXT[r.status] || r.status;
        if (d.reviewer) text += " by " + d.reviewer;
        if (d.channel) text += " (" + d.channel + ")";
        card.append(node("div", "status " + r.status, text));
        if (d.comment) card.append(node("div", "summary", d.comment));
      }
    }

    _button(kind, text, onClick) {
      var b = node("button", kind, text);
      b.type = "button";
      b.setAttribute("data-action", kind);
      b.addEventListener("click", onClick);
      return b;
    }

    _approve() {
      var r = this.request;
      var boxes = this._card.querySelectorAll("input[type=checkbox]");
      if (!boxes.length) return this._decide({ outcome: "approved" });
      var selected = Array.prototype.filter.call(boxes, function (b) { return b.checked; }).map(function (b) { return b.value; });
      if (selected.length === 0) { this._error("tick at least one item, or reject"); return; }
      var all = selected.length === r.items.length && (r.allowed || []).indexOf("approve") >= 0;
      return this._decide(all ? { outcome: "approved" } : { outcome: "approved", selected: selected });
    }

    async _decide(body) {
      var area = this._card.querySelector("textarea");
      var comment = area ? area.value.trim() : "";
      if (comment) body.comment = comment;
      // Bound to the view the card shows (its digest came with it), where the server takes it.
      if (this.request && this.request.sendsViewDigest && this.request.viewDigest) body.viewDigest = this.request.viewDigest;
      if (body.outcome === "revise" && !comment && this.request && this.request.revisionCommentRequired) {
        this._error("say what should change to ask for a revision");
        return;
      }
      var buttons = this._card.querySelectorAll("button");
      buttons.forEach(function (b) { b.disabled = true; });
      try {
        var decided = await this._call("POST", "/decisions", body, undefined);
        this._show(decided);
        // Final: the long-poll under way has nothing left to wait for. (A partial approval towards
        // a quorum stays pending, and the card keeps following it.)
        if (decided.status !== "pending" && this._run) this._run.abort();
      } catch (e) {
        // Someone else decided first: show what they decided.
        if (e.status === 409 && e.request) this._show(e.request);
        else buttons.forEach(function (b) { b.disabled = false; });
        this._error(e.message);
      }
    }
  }

  customElements.define("airlock-approval", AirlockApproval);
})();
`;
