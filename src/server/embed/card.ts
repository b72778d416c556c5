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
import type { DiffLine } from "../inbox/diff.js";
import { editFieldsOf, type FieldSpec, fieldChanges } from "../inbox/edit-form.js";
import { bounded } from "../inbox/markdown.js";
import { LATEST_TOOL_CALLS, type ProgressDoc, type ToolCall } from "../inbox/progress.js";
import { type MdNode, markdownTree } from "./markdown-tree.js";

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
  /** The edit form's fields (inbox/edit-form.tsx: from the request's argsSchema, else from its
   * args), when the request allows an edit. */
  editFields?: FieldSpec[];
  /** What an approval's edit changed, field by field; a text's change (a file's content) as lines. */
  editedChanges?: CardChange[];
  /** The agent's live report (as a tree of allowed elements) and its latest tool calls. (Not
   * `progress`: that is the request's own figures, pattern 1's.) */
  liveReport?: CardProgress;
};

export interface CardChange {
  name: string;
  before: unknown;
  after: unknown;
  lines?: DiffLine[] | undefined;
  file?: string | undefined;
  against?: "file" | "proposal" | undefined;
}

export interface CardProgress {
  report?: MdNode[];
  /** Characters of the report left out (the card shows the first part of a long one). */
  omitted: number;
  section?: string | undefined;
  /** The latest tool calls, newest first. */
  latest: ToolCall[];
  /** How many earlier calls are folded. */
  earlier: number;
  end?: { status: string; message?: string | undefined } | undefined;
  events: number;
}

/** The most characters of the report the card shows. */
const CARD_REPORT_CHARS = 20_000;

export function cardRequest(
  request: ApprovalRequest,
  extra: { progress?: ProgressDoc | undefined } = {},
): CardRequest {
  const view = reviewViewOf(request);
  const out: CardRequest = {
    ...request,
    buttons: doorLabels(request),
    view,
    viewDigest: viewDigestOf(request),
    argsText: argsJson(view.args),
    sendsViewDigest: CARD_SENDS_VIEW_DIGEST,
  };
  if (request.status === "pending" && request.allowed.includes("edit")) {
    const fields = editFieldsOf(request.args, request.argsSchema);
    if (fields) out.editFields = fields;
  }
  const edited = request.decision?.editedArgs;
  if (edited) out.editedChanges = fieldChanges(request.args, edited, request.preview);
  const doc = extra.progress;
  if (doc) {
    const shown = doc.report ? bounded(doc.report.markdown, CARD_REPORT_CHARS) : undefined;
    out.liveReport = {
      ...(shown ? { report: markdownTree(shown.text) } : {}),
      omitted: shown?.omitted ?? 0,
      section: doc.report?.section,
      latest: doc.toolCalls.slice(-LATEST_TOOL_CALLS).reverse(),
      earlier: Math.max(0, doc.toolCalls.length - LATEST_TOOL_CALLS),
      end: doc.end ? { status: doc.end.status, message: doc.end.message } : undefined,
      events: doc.events,
    };
  }
  return out;
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
    ".label, .note { color:#5b6475; font-size:.8rem; margin-top:.4rem; }",
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
    ".error { color:#b42318; margin-top:.4rem; }",
    "button { min-height:44px; }",
    ".report { border-left:3px solid #dde1e8; padding-left:.7rem; margin:.4rem 0; overflow-wrap:anywhere; }",
    ".report h1, .report h2, .report h3, .report h4 { font-size:1rem; margin:.5rem 0 .2rem; }",
    ".report p { margin:.3rem 0; } .report ul, .report ol { list-style:revert; padding-left:1.2rem; }",
    ".report pre { white-space:pre-wrap; }",
    ".badge { display:inline-block; padding:0 .45rem; border-radius:999px; font-size:.75rem; border:1px solid #c9d7fb; background:#eef3ff; color:#2456d6; font-weight:400; }",
    ".calls li { font-size:.85rem; overflow-wrap:anywhere; } .calls code { font-weight:600; }",
    ".edit-form { border:1px solid #dde1e8; border-radius:8px; padding:.5rem .7rem; margin:.4rem 0; }",
    ".edit-form[hidden] { display:none; }",
    ".edit-form label { display:block; font-size:.85rem; margin-top:.4rem; overflow-wrap:anywhere; }",
    ".edit-form input[type=text], .edit-form input[type=number], .edit-form select { width:100%; box-sizing:border-box; font:inherit; padding:.3rem .4rem; border:1px solid #dde1e8; border-radius:6px; }",
    ".edit-form textarea.document, .edit-form textarea.json { font: 12px/1.4 ui-monospace, Menlo, monospace; min-height:8rem; white-space:pre; overflow:auto; }",
    ".changes li { margin:.3rem 0; overflow-wrap:anywhere; } del { background:#fdecec; color:#8c1d18; } ins { background:#e6f6ec; color:#0b5c35; text-decoration:none; }"
  ].join("\n");

  // The report arrives as a tree of allowed tags and text (embed/markdown-tree.ts): built with
  // createElement and textContent, links to http(s) only.
  var TREE_TAGS = { p:1, h1:1, h2:1, h3:1, h4:1, h5:1, h6:1, ul:1, ol:1, li:1, blockquote:1, strong:1, em:1, s:1, code:1, pre:1, a:1, br:1, hr:1, table:1, thead:1, tbody:1, tr:1, th:1, td:1 };
  function buildTree(nodes, parent, depth) {
    if (!Array.isArray(nodes) || depth > 40) return;
    nodes.forEach(function (n) {
      if (typeof n === "string") { parent.append(n); return; }
      if (!n || !TREE_TAGS[n.t]) return;
      var el = document.createElement(n.t);
      if (n.t === "a" && typeof n.href === "string" && /^https?:\/\//i.test(n.href)) {
        el.href = n.href; el.rel = "noopener noreferrer nofollow"; el.target = "_blank";
      }
      buildTree(n.c, el, depth + 1);
      parent.append(el);
    });
  }

  // An edit field's value, read back into the type its spec says (the engine checks the schema).
  function fieldValue(f, input) {
    if (f.kind === "boolean") return { value: input.checked };
    var raw = input.value;
    if (f.kind === "enum") {
      if (raw === "") return { skip: true };
      return { value: (f.options || [])[Number(raw)] };
    }
    if (f.kind === "number" || f.kind === "integer") {
      if (raw.trim() === "") return f.required ? { error: f.name + ": enter a number" } : { skip: true };
      var n = Number(raw);
      if (!isFinite(n)) return { error: f.name + ": not a number" };
      return { value: n };
    }
    if (f.kind === "json") {
      if (raw.trim() === "") return { skip: true };
      try { return { value: JSON.parse(raw) }; } catch (e) { return { error: f.name + ": not valid JSON (" + e.message + ")" }; }
    }
    return { value: raw.replace(/\r\n/g, "\n") };
  }
  function fieldText(f, v) {
    if (v === undefined || v === null) return "";
    if (f.kind === "json") return JSON.stringify(v, null, 2);
    if (typeof v === "string") return v;
    return typeof v === "number" ? String(v) : JSON.stringify(v);
  }
  function inline(v) {
    if (v === undefined) return "(not set)";
    var t = typeof v === "string" ? "\u201c" + v + "\u201d" : JSON.stringify(v);
    return t.length > 120 ? t.slice(0, 119) + "\u2026" : t;
  }

  var FINAL_TEXT = { approved: "Approved", rejected: "Rejected", revise: "Revision requested", timed_out: "Timed out", cancelled: "Cancelled", responded: "Answered" };

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
          if (r.status !== "pending") {
            // Decided. While the agent's report is being written (or, for a minute after an
            // approval, may start), read it again every few seconds.
            var decidedAt = (r.decision && r.decision.decidedAt) || 0;
            var running = r.liveReport && !r.liveReport.end;
            var mayStart = !r.liveReport && r.status === "approved" && Date.now() - decidedAt < 60000;
            if (!running && !mayStart) return;
            await sleep(3000, signal);
            first = true;
          }
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
      var typed = card.querySelector("textarea.comment");
      var comment = typed ? typed.value : "";
      var answerBox = card.querySelector("textarea.response");
      var answer = answerBox ? answerBox.value : "";
      var editBox = card.querySelector(".edit-form");
      var editOpen = !!(editBox && !editBox.hidden);
      var editValues = {};
      card.querySelectorAll(".edit-form [data-field]").forEach(function (el) {
        editValues[el.getAttribute("data-field")] = el.type === "checkbox" ? el.checked : el.value;
      });
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
        card.append(node("div", "label", r.decision && r.decision.editedArgs
          ? "The arguments the agent asked for (the approval edited them: see below):"
          : "Exact arguments (what runs if approved):"));
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

      if (r.liveReport) this._report(r.liveReport);

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
        var area = node("textarea", "comment");
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
        if (r.editFields && r.editFields.length) {
          buttons.append(this._button("edit", "Edit\u2026", function () {
            var box = self._card.querySelector(".edit-form");
            if (box) { box.hidden = !box.hidden; if (!box.hidden) { var first = box.querySelector("[data-field]"); if (first) first.focus(); } }
          }));
        }
        card.append(buttons);
        if (r.editFields && r.editFields.length) card.append(this._editForm(r, editOpen, editValues));
        if (allowed.indexOf("respond") >= 0) {
          var respond = node("div", "respond");
          var rlabel = node("div", "note", "Or answer the agent instead (nothing runs; it gets your words):");
          var box = node("textarea", "response");
          box.setAttribute("aria-label", "answer");
          box.value = answer;
          var send = this._button("respond", "Send the answer", function () { return self._respond(); });
          respond.append(rlabel, box, send);
          card.append(respond);
        }
      } else {
        var d = r.decision || {};
        var text = FINAL_TEXT[r.status] || r.status;
        if (d.reviewer) text += " by " + d.reviewer;
        if (d.channel) text += " (" + d.channel + ")";
        card.append(node("div", "status " + r.status, text));
        if (d.comment) card.append(node("div", "summary", d.comment));
        if (r.status === "responded" && d.response !== undefined) {
          card.append(node("div", "note", "The answer the agent gets:"));
          card.append(node("pre", "response", typeof d.response === "string" ? d.response : JSON.stringify(d.response, null, 2)));
        }
        if (r.editedChanges) this._changes(r.editedChanges);
      }
    }

    /** The agent's report as it grows, and its latest tool calls (older ones counted). */
    _report(p) {
      var box = node("section", "progress");
      box.setAttribute("aria-label", "the agent's report");
      var head = node("div", "note", "The agent's report (its own words) ");
      head.append(node("span", "badge", p.end ? p.end.status + (p.end.message ? ": " + p.end.message : "") : "running"));
      box.append(head);
      if (p.report && p.report.length) {
        var doc = node("div", "report");
        buildTree(p.report, doc, 0);
        box.append(doc);
        if (p.omitted > 0) box.append(node("div", "meta", "\u2026 " + p.omitted + " more characters not shown"));
      }
      if (p.latest && p.latest.length) {
        var list = node("ul", "calls");
        p.latest.forEach(function (c) {
          var li = node("li");
          li.append(node("code", "", c.tool));
          if (c.args) li.append(" ", node("span", "detail", c.args));
          if (!c.done) li.append(" ", node("span", "badge", "running"));
          list.append(li);
        });
        box.append(node("div", "note", "Latest tool calls" + (p.earlier ? " (" + p.earlier + " earlier ones folded)" : "") + ":"), list);
      }
      this._card.append(box);
    }

    /** The edit form: one field per argument (the server's specs); a text is edited as text. */
    _editForm(r, open, values) {
      var self = this;
      var box = node("div", "edit-form");
      box.hidden = !open;
      box.append(node("div", "note", "Edit the arguments, then approve (checked against the tool's schema):"));
      r.editFields.forEach(function (f, i) {
        var id = "f" + i;
        var label = node("label", "", f.name + (f.required ? "" : " (optional)"));
        label.setAttribute("for", id);
        var current = Object.prototype.hasOwnProperty.call(values, f.name) ? values[f.name] : undefined;
        var input;
        if (f.kind === "boolean") {
          input = node("input"); input.type = "checkbox";
          input.checked = current !== undefined ? !!current : r.args[f.name] === true;
        } else if (f.kind === "enum") {
          input = node("select");
          if (!f.required) { var none = node("option", "", "(not set)"); none.value = ""; input.append(none); }
          (f.options || []).forEach(function (o, j) {
            var opt = node("option", "", typeof o === "string" ? o : JSON.stringify(o));
            opt.value = String(j);
            if (current !== undefined ? current === String(j) : JSON.stringify(o) === JSON.stringify(r.args[f.name])) opt.selected = true;
            input.append(opt);
          });
        } else if (f.kind === "number" || f.kind === "integer") {
          input = node("input"); input.type = "number"; input.step = f.kind === "integer" ? "1" : "any";
          input.value = current !== undefined ? current : fieldText(f, r.args[f.name]);
        } else if (f.kind === "text") {
          input = node("input"); input.type = "text";
          input.value = current !== undefined ? current : fieldText(f, r.args[f.name]);
        } else {
          input = node("textarea", f.kind === "json" ? "json" : "document");
          input.spellcheck = false;
          input.value = current !== undefined ? current : fieldText(f, r.args[f.name]);
        }
        input.id = id;
        input.setAttribute("data-field", f.name);
        box.append(label, input);
      });
      var approveEdit = this._button("approve", "Approve with these arguments", function () { return self._edit(); });
      approveEdit.setAttribute("data-action", "approve-edit");
      box.append(approveEdit);
      return box;
    }

    _edit() {
      var r = this.request;
      var args = {};
      var inputs = this._card.querySelectorAll(".edit-form [data-field]");
      for (var i = 0; i < inputs.length; i++) {
        var name = inputs[i].getAttribute("data-field");
        var f = (r.editFields || []).filter(function (x) { return x.name === name; })[0];
        if (!f) continue;
        var got = fieldValue(f, inputs[i]);
        if (got.error) { this._error(got.error); inputs[i].focus(); return; }
        if (!got.skip) args[name] = got.value;
      }
      return this._decide({ outcome: "approved", editedArgs: args });
    }

    _respond() {
      var r = this.request;
      var box = this._card.querySelector("textarea.response");
      var text = box ? box.value.replace(/\r\n/g, "\n") : "";
      if (!text.trim()) { this._error("write an answer first"); return; }
      var schema = r.responseSchema;
      var response = text;
      if (schema && schema.type && schema.type !== "string") {
        try { response = JSON.parse(text); } catch (e) { this._error("the answer must be JSON here: " + e.message); return; }
      }
      return this._decide({ outcome: "responded", response: response });
    }

    /** What an approval's edit changed: a value as before \u2192 after, a text as its diff. */
    _changes(list) {
      if (!list.length) return;
      var box = node("div", "changes");
      box.append(node("div", "note", "Approved with edited arguments (what runs is the edited version):"));
      var ul = node("ul", "change-list");
      list.forEach(function (c) {
        var li = node("li");
        li.setAttribute("data-field", c.name);
        if (c.lines) {
          li.append(node("code", "", c.name), c.file ? ": what will be written to " + c.file : " changed:");
          var pre = node("pre", "diff");
          c.lines.forEach(function (l) {
            pre.append(node("span", l.kind === "add" ? "add" : l.kind === "del" ? "del" : "", l.text), l.kind === "add" || l.kind === "del" ? "" : "\n");
          });
          li.append(pre);
        } else {
          li.append(node("code", "", c.name), ": ", node("del", "", inline(c.before)), " \u2192 ", node("ins", "", inline(c.after)));
        }
        ul.append(li);
      });
      box.append(ul);
      this._card.append(box);
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
      var area = this._card.querySelector("textarea.comment");
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
        // An approval goes on being followed a little: the agent's report may come.
        if (decided.status !== "pending" && decided.status !== "approved" && this._run) this._run.abort();
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
