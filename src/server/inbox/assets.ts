// The inbox's static files, all served by Airlock itself (no CDN, no external fonts): the style
// sheet, a small script for countdowns, live updates, bulk selection and keyboard shortcuts, and htmx from its npm
// package. The Content-Security-Policy allows scripts and styles from this origin only.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

let htmxSource: string | undefined;
export function htmxScript(): string {
  htmxSource ??= readFileSync(require.resolve("htmx.org/dist/htmx.min.js"), "utf8");
  return htmxSource;
}

export const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export const INBOX_CSS = `
:root { --fg:#1d2330; --muted:#5b6475; --bg:#f6f7f9; --card:#fff; --line:#dde1e8; --accent:#2456d6;
  --ok:#13795b; --bad:#b42318; --warn:#a15c07; --add:#e6f6ec; --del:#fdecec; --addfg:#0b5c35; --delfg:#8c1d18; }
* { box-sizing: border-box; }
body { margin:0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color:var(--fg); background:var(--bg); }
a { color: var(--accent); }
header.top { display:flex; gap:1rem; align-items:center; justify-content:space-between; padding:.6rem 1rem; background:#111827; color:#fff; flex-wrap:wrap; }
header.top a { color:#fff; text-decoration:none; margin-right:1rem; }
header.top a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, summary:focus-visible { outline:3px solid #f59e0b; outline-offset:2px; }
header.top .brand { font-weight:700; letter-spacing:.02em; }
header.top form { display:inline; margin:0; }
main { max-width: 1100px; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.4rem; margin:.2rem 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.4rem 0 .5rem; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:1rem; margin-bottom:1rem; }
.card > :first-child { margin-top:0; } .card > :last-child { margin-bottom:0; }
.card.preview { padding:.5rem; }
.filters { display:flex; gap:.5rem; flex-wrap:wrap; align-items:end; margin-bottom:1rem; }
.filters label { display:flex; flex-direction:column; font-size:.8rem; color:var(--muted); }
input, select, textarea, button { font: inherit; }
input[type=text], input[type=password], input[type=search], select, textarea { padding:.4rem .5rem; border:1px solid var(--line); border-radius:6px; background:#fff; }
textarea { width:100%; min-height: 4rem; }
textarea.json { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; min-height: 10rem; }
button { padding:.45rem .9rem; border-radius:6px; border:1px solid var(--line); background:#fff; cursor:pointer; }
button.primary { background:var(--accent); color:#fff; border-color:var(--accent); }
/* Colours follow the verb, whatever the label: approving is green, rejecting red. */
button.approve { background:var(--ok); color:#fff; border-color:var(--ok); }
button.approve.secondary { background:#fff; color:var(--ok); border-color:var(--ok); }
button.reject { background:var(--bad); color:#fff; border-color:var(--bad); }
button.warn { background:var(--warn); color:#fff; border-color:var(--warn); }
a.button { display:inline-block; padding:.45rem .9rem; border-radius:6px; border:1px solid var(--line); background:#fff; text-decoration:none; color:var(--fg); }
table.queue { width:100%; border-collapse:collapse; background:var(--card); border:1px solid var(--line); border-radius:8px; }
table.queue th, table.queue td { text-align:left; padding:.55rem .6rem; border-bottom:1px solid var(--line); vertical-align:top; }
table.queue th { font-size:.8rem; color:var(--muted); font-weight:600; }
.badge { display:inline-block; padding:0 .45rem; border-radius:999px; font-size:.78rem; border:1px solid var(--line); }
.risk-high, .risk-critical { background:#fdecec; color:var(--bad); border-color:#f5c2c0; }
.risk-medium { background:#fff4e5; color:var(--warn); border-color:#f7d9ad; }
.risk-low { background:#e6f6ec; color:var(--ok); border-color:#b5e3c7; }
.status-approved { color:var(--ok); } .status-rejected, .status-timed_out, .status-cancelled { color:var(--bad); } .status-revise { color:var(--warn); }
.countdown.overdue { color:var(--bad); font-weight:600; }
.muted { color:var(--muted); }
.empty { padding:2rem; text-align:center; color:var(--muted); }
/* Columns never grow past the window: long lines wrap, or scroll inside their own box. */
.grid { display:grid; grid-template-columns: minmax(0, 2fr) minmax(0, 1fr); gap:1rem; }
.grid > * { min-width:0; }
h1.title { overflow-wrap:anywhere; margin-bottom:.3rem; }
p.back { margin:.2rem 0; }
.strip { display:flex; flex-wrap:wrap; gap:.3rem .8rem; align-items:center; margin:0 0 .8rem; }
.markdown { overflow-wrap:anywhere; }
.markdown > :first-child { margin-top:0; } .markdown > :last-child { margin-bottom:0; }
.markdown :is(pre, code) { background:#f2f4f7; border-radius:4px; }
.markdown pre { padding:.6rem; overflow:auto; max-width:100%; max-height:50vh; }
.markdown table { display:block; overflow:auto; max-width:100%; }
.markdown img { max-width:100%; }
dl.context { display:grid; grid-template-columns:max-content minmax(0, 1fr); gap:.2rem .8rem; margin:0 0 .8rem; }
dl.context dt { color:var(--muted); } dl.context dd { margin:0; overflow-wrap:anywhere; }
.critiques h2 { font-size:1rem; } .critiques ul { margin:0; padding-left:1.1rem; } .critiques li { overflow-wrap:anywhere; }
.truncated { font-size:.85rem; }
pre.diff { background:#fbfbfc; border:1px solid var(--line); border-radius:6px; padding:.4rem 0; overflow:auto; max-height:55vh; margin:0; font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre.diff span { display:block; padding:0 .7rem; white-space:pre; }
pre.diff .add { background:var(--add); color:var(--addfg); }
pre.diff .del { background:var(--del); color:var(--delfg); }
pre.diff .hunk { color:#6b46c1; background:#f4f0ff; }
pre.diff .meta { color:var(--muted); font-weight:600; }
pre.json { background:#f2f4f7; padding:.6rem; border-radius:6px; overflow:auto; max-height:60vh; white-space:pre-wrap; overflow-wrap:anywhere; font: 13px/1.45 ui-monospace, monospace; }
details > summary { cursor:pointer; }
.edit-fields { display:flex; flex-direction:column; gap:.7rem; margin:.6rem 0; }
.edit-fields .field { display:flex; flex-direction:column; gap:.2rem; min-width:0; }
.edit-fields .field-boolean { flex-direction:row; align-items:center; flex-wrap:wrap; gap:.4rem; }
.edit-fields label { overflow-wrap:anywhere; }
.edit-fields input[type=text], .edit-fields input[type=number], .edit-fields select { width:100%; max-width:32rem; }
.edit-fields input[type=number] { padding:.4rem .5rem; border:1px solid var(--line); border-radius:6px; }
textarea.document { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; min-height:8rem; white-space:pre; overflow-wrap:normal; overflow:auto; }
[aria-invalid=true] { border-color:var(--bad) !important; outline:2px solid #f5c2c0; }
.field-error { margin:.2rem 0 0; }
details.edit-json { margin-top:.6rem; }
.edited ul.field-changes { list-style:none; padding:0; margin:.4rem 0; }
.edited ul.field-changes > li { margin:.4rem 0; overflow-wrap:anywhere; }
.edited del { background:var(--del); color:var(--delfg); text-decoration:line-through; padding:0 .2rem; border-radius:3px; }
.edited ins { background:var(--add); color:var(--addfg); text-decoration:none; padding:0 .2rem; border-radius:3px; }
details.superseded > summary { color:var(--muted); }
.live-report h2 { margin-top:0; display:flex; flex-wrap:wrap; gap:.4rem; align-items:center; }
.live-report h3 { font-size:.95rem; margin:.8rem 0 .3rem; }
.live-report .report { border-left:3px solid var(--line); padding-left:.8rem; }
.live-report ol.calls { margin:.2rem 0; padding-left:1.4rem; } .live-report ol.calls li { overflow-wrap:anywhere; margin:.15rem 0; }
.badge.running { background:#eef3ff; color:var(--accent); border-color:#c9d7fb; }
li.progress-run > details > summary { color:var(--muted); }
fieldset.items { border:1px solid var(--line); border-radius:8px; background:var(--card); margin:0 0 1rem; min-width:0; }
.items label { display:block; padding:.3rem 0; overflow-wrap:anywhere; }
.items ol { margin:.2rem 0; padding-left:1.4rem; } .items li { overflow-wrap:anywhere; } .items li.not-chosen { color:var(--muted); }
.actions { display:flex; flex-wrap:wrap; gap:.5rem; margin:.7rem 0; align-items:center; }
/* The buttons stay in view while the reviewer scrolls a long request. */
.decide-bar { position:sticky; bottom:0; z-index:1; background:var(--bg); padding:.5rem 0; margin:.5rem 0 0; border-top:1px solid var(--line); }
.decide-bar .keys { font-size:.85rem; }
.confirm { border-color:#f5c2c0; background:#fff8f7; }
.confirm.decide-bar { padding:.8rem 1rem; border:1px solid #f5c2c0; }
.error { background:#fdecec; color:var(--bad); border:1px solid #f5c2c0; padding:.5rem .7rem; border-radius:6px; margin:.5rem 0; }
.notice { background:#eaf6ee; border:1px solid #b9e0c5; padding:.5rem .7rem; border-radius:6px; margin:.5rem 0; }
.trust-list { list-style:none; padding:0; }
.trust-list > li { border:1px solid var(--line); border-radius:6px; padding:.6rem .8rem; margin:.6rem 0; overflow-wrap:anywhere; }
.outcome { font-size:1.05rem; }
ol.trail { padding-left:1.2rem; } ol.trail li { margin:.2rem 0; }
kbd { border:1px solid var(--line); border-bottom-width:2px; border-radius:4px; padding:0 .3rem; font-size:.8rem; background:#fff; }
dl.facts { display:grid; grid-template-columns:max-content 1fr; gap:.2rem .8rem; margin:0; }
dl.facts dt { color:var(--muted); } dl.facts dd { margin:0; min-width:0; overflow-wrap:anywhere; }
.login { max-width: 420px; margin: 3rem auto; }
.login input { width: 100%; }
table.queue th.pick, table.queue td.pick { width:2rem; padding-right:0; }
input.pick, #pick-shown { width:1.15rem; height:1.15rem; margin:.1rem 0; cursor:pointer; }
table.queue tr.row.focused { background:#eef3ff; box-shadow: inset 3px 0 0 var(--accent); }
table.queue tr.row.picked { background:#f3f7ff; }
table.queue tr.group-head th { background:#eef0f4; color:var(--fg); font-size:.85rem; padding:.35rem .6rem; overflow-wrap:anywhere; }
form.bulk { display:flex; flex-direction:column; gap:.5rem; padding:.7rem 1rem; }
form.bulk .bulk-row { display:flex; flex-wrap:wrap; gap:.5rem 1rem; align-items:end; min-width:0; }
form.bulk .scope { font-size:.9rem; min-width:0; }
form.bulk .bulk-comment { display:flex; flex-direction:column; flex:1 1 14rem; min-width:0; font-size:.8rem; }
form.bulk .bulk-comment input { width:100%; padding:.4rem .5rem; border:1px solid var(--line); border-radius:6px; }
.overlay { position:fixed; inset:0; z-index:10; background:rgba(17,24,39,.45); display:flex; align-items:center; justify-content:center; padding:1rem; }
.overlay[hidden] { display:none; }
[hidden] { display:none !important; }
.overlay .card { max-width:32rem; width:100%; max-height:90vh; overflow:auto; }
section.card ul { margin:.2rem 0; padding-left:1.2rem; } section.card li { margin:.25rem 0; overflow-wrap:anywhere; }
@media (max-width: 720px) {
  table.queue td.pick { width:auto; padding-top:.3rem; }
  table.queue tr.group-head th { display:block; }
  form.bulk { padding:.6rem; }
  form.bulk button { flex:1 1 auto; }
  .grid { grid-template-columns: 1fr; }
  table.queue thead { display:none; }
  table.queue, table.queue tbody, table.queue tr, table.queue td { display:block; width:100%; }
  table.queue tr { border-bottom:1px solid var(--line); padding:.4rem 0; }
  table.queue td { border:0; padding:.15rem .6rem; }
  table.queue td[data-label]::before { content: attr(data-label) ": "; color:var(--muted); font-size:.85rem; }
  table.queue td.name { font-weight:600; }
  main { padding: .6rem; }
  .decide-bar .keys { display:none; }
}
`;

export const INBOX_JS = `
(function () {
  "use strict";
  function fmt(ms) {
    if (ms <= 0) return "overdue";
    var s = Math.floor(ms / 1000), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    return (h ? h + "h " : "") + (h || m ? m + "m " : "") + r + "s left";
  }
  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-deadline]").forEach(function (el) {
      var ms = Number(el.getAttribute("data-deadline")) - now;
      el.textContent = fmt(ms);
      el.classList.toggle("overdue", ms <= 0);
    });
  }
  // Times in the reader's own time zone (the page carries UTC as a fallback).
  function localTimes(root) {
    (root || document).querySelectorAll("time[data-local]").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime") || "");
      if (isNaN(d.getTime())) return;
      el.textContent = d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
      el.title = d.toISOString();
    });
  }
  tick();
  localTimes();
  setInterval(tick, 1000);

  // Live updates: the server streams events this reviewer may see; the page refreshes its parts.
  var body = document.body;
  var live = body.getAttribute("data-live");
  var requestId = body.getAttribute("data-request-id");
  var timer = null;
  function fragment(url, then) {
    fetch(url, { credentials: "same-origin" }).then(function (res) {
      if (!res.ok) return;
      return res.text().then(function (html) {
        var holder = document.createElement("div");
        holder.innerHTML = html;
        then(holder, res);
      });
    });
  }
  // The folds (details) a reviewer opened stay open when their part is refreshed.
  function keepOpen(old, next) {
    if (!old || !next) return;
    var before = old.querySelectorAll("details");
    var after = next.querySelectorAll("details");
    for (var i = 0; i < before.length && i < after.length; i++) {
      if (before[i].open) after[i].setAttribute("open", "");
    }
  }
  function swap(old, next) {
    if (!old || !next) return;
    old.replaceWith(next);
    localTimes(next);
    tick();
  }
  // The filter as the form says now (htmx filters without changing the address).
  function currentFilter() {
    var f = document.querySelector("form.filters");
    if (!f || !window.URLSearchParams || !window.FormData) return location.search;
    return "?" + new URLSearchParams(new FormData(f)).toString();
  }
  var queueSwapped = function () {};
  function refresh() {
    timer = null;
    if (live === "queue") {
      var q = document.getElementById("queue");
      if (!q) return;
      fragment("/inbox/queue" + currentFilter(), function (holder, res) {
        var count = res.headers.get("x-pending-count");
        if (count !== null) document.title = "(" + count + ") Airlock inbox";
        q.innerHTML = holder.innerHTML;
        tick();
        queueSwapped();
      });
    } else if (live === "request" && requestId) {
      var base = "/inbox/requests/" + encodeURIComponent(requestId);
      fragment(base + "/trail", function (holder) {
        var old = document.getElementById("trail");
        var next = holder.querySelector("#trail");
        keepOpen(old, next);
        swap(old, next);
      });
      // The agent's report as it grows (progress events), its folds kept as the reviewer left them.
      fragment(base + "/report", function (holder) {
        var old = document.getElementById("live-report");
        var next = holder.querySelector("#live-report");
        keepOpen(old, next);
        swap(old, next);
      });
      fragment(base + "/panel", function (holder) {
        // The side panel always; the decision panel only once the status changed, so nothing the
        // reviewer ticked or typed is lost while the request is still open.
        swap(document.getElementById("facts"), holder.querySelector("#facts"));
        var panel = document.getElementById("decision-panel");
        var next = holder.querySelector("#decision-panel");
        if (panel && next && next.getAttribute("data-status") !== panel.getAttribute("data-status")) {
          swap(panel, next);
        }
      });
    }
  }
  if (live && window.EventSource) {
    var after = body.getAttribute("data-after");
    var es = new EventSource("/inbox/stream" + (after ? "?after=" + encodeURIComponent(after) : ""));
    es.onmessage = function (e) {
      try {
        var data = JSON.parse(e.data);
        if (live === "request" && data.requestId !== requestId) return;
        // Agents' progress changes no queue row.
        if (live === "queue" && (data.type === "notified" || data.type === "auto_executed")) return;
      } catch (err) { return; }
      if (!timer) timer = setTimeout(refresh, 100);
    };
  }

  // JSON editor: say at once when the text is not JSON; the server checks it against the schema.
  document.querySelectorAll("textarea.json").forEach(function (ta) {
    var out = document.getElementById(ta.getAttribute("data-error-for") || "");
    ta.addEventListener("input", function () {
      if (!out) return;
      try { JSON.parse(ta.value); out.textContent = ""; out.hidden = true; }
      catch (err) { out.textContent = "Not valid JSON: " + err.message; out.hidden = false; }
    });
  });

  // The request page's comment box serves every decision. After "r" it is the revision's: Enter
  // sends the revision (Shift+Enter for a new line) until the box loses focus.
  var comment = document.getElementById("comment");
  var reviseHint = document.getElementById("revise-hint");
  var revising = false;
  function reviseMode(on) {
    revising = on;
    if (reviseHint) reviseHint.hidden = !on;
  }
  if (comment) {
    comment.addEventListener("keydown", function (e) {
      if (!revising || e.key !== "Enter" || e.shiftKey) return;
      var b = document.getElementById("btn-revise");
      if (b) { e.preventDefault(); b.click(); }
    });
    comment.addEventListener("blur", function () { setTimeout(function () { reviseMode(false); }, 200); });
  }
  // A revision that needs a comment asks for one before the form is sent.
  var reviseButton = document.getElementById("btn-revise");
  if (reviseButton && comment) reviseButton.addEventListener("click", function (e) {
    if (comment.getAttribute("data-revise-required") === "yes" && !comment.value.trim()) {
      e.preventDefault();
      reviseMode(true);
      comment.focus();
    }
  });
  // Enter in one of the edit or answer form's fields does not send the form (an approval, or an
  // answer, is sent by its button only).
  ["edit-form", "respond-form"].forEach(function (id) {
    var f = document.getElementById(id);
    if (f) f.addEventListener("keydown", function (e) {
      var t = e.target;
      if (e.key === "Enter" && t && t.tagName === "INPUT" && t.type !== "checkbox") e.preventDefault();
    });
  });
  // Rejecting from the keyboard asks first: "d" opens the confirmation in the bar.
  var rejectConfirm = document.getElementById("reject-confirm");
  function askReject(open) {
    if (!rejectConfirm) return false;
    rejectConfirm.hidden = !open;
    document.querySelectorAll(".decide-bar.actions").forEach(function (bar) { bar.hidden = open; });
    if (open) { var yes = document.getElementById("btn-reject-confirm"); if (yes) yes.focus(); }
    return true;
  }
  var rejectBack = document.getElementById("btn-reject-back");
  if (rejectBack) rejectBack.addEventListener("click", function () { askReject(false); var b = document.getElementById("btn-reject"); if (b) b.focus(); });

  // Bulk review on the queue: the selection is kept in memory, so a live refresh that drops a row
  // (someone else decided it) keeps it selected; the server then reports who decided it first.
  var bulk = document.getElementById("bulk");
  if (bulk) {
    var picked = {};
    var pickedCount = 0;
    var focusedId = null;
    var lastBox = null;
    var scope = document.getElementById("scope-filter");
    var help = document.getElementById("keys-help");
    var boxes = function () { return Array.prototype.slice.call(document.querySelectorAll("#queue input.pick")); };
    var rows = function () { return Array.prototype.slice.call(document.querySelectorAll("#queue tr.row")); };
    var setPicked = function (id, on) {
      if (on && !picked[id]) { picked[id] = true; pickedCount++; }
      else if (!on && picked[id]) { delete picked[id]; pickedCount--; }
    };
    var show = function () {
      var present = {};
      boxes().forEach(function (b) {
        b.checked = !!picked[b.value];
        present[b.value] = true;
        var tr = b.closest("tr");
        if (tr) tr.classList.toggle("picked", b.checked);
      });
      var all = boxes();
      var head = document.getElementById("pick-shown");
      if (head) head.checked = all.length > 0 && all.every(function (b) { return b.checked; });
      var kept = document.getElementById("bulk-kept");
      if (kept) {
        kept.textContent = "";
        Object.keys(picked).forEach(function (id) {
          if (present[id]) return;
          var h = document.createElement("input");
          h.type = "hidden"; h.name = "ids"; h.value = id;
          kept.appendChild(h);
        });
      }
      // How many "all matching" stands for, as the rows were last read (the form posts those ids).
      var shown = document.querySelector("#queue input[name=shown_count]");
      var matching = shown ? shown.getAttribute("data-label") || "0" : "0";
      var mc = document.getElementById("match-count");
      if (mc) mc.textContent = matching;
      var out = document.getElementById("picked-count");
      if (out) {
        out.textContent = scope && scope.checked
          ? "All " + matching + " pending requests matching this filter"
          : pickedCount ? pickedCount + " selected" : "Tick requests to decide several at once.";
      }
    };
    var focusRow = function (tr) {
      rows().forEach(function (r) { r.classList.remove("focused"); r.removeAttribute("aria-current"); });
      focusedId = tr ? tr.getAttribute("data-request-id") : null;
      if (!tr) return;
      tr.classList.add("focused");
      tr.setAttribute("aria-current", "true");
      if (tr.scrollIntoView) tr.scrollIntoView({ block: "nearest" });
    };
    var focused = function () {
      return rows().filter(function (r) { return r.getAttribute("data-request-id") === focusedId; })[0] || null;
    };
    queueSwapped = function () { show(); var tr = focused(); if (tr) focusRow(tr); };
    // A new filter is a new list: the selection starts again.
    document.body.addEventListener("htmx:afterSwap", function (e) {
      if (!e.target || e.target.id !== "queue") return;
      picked = {}; pickedCount = 0; lastBox = null;
      queueSwapped();
    });
    document.addEventListener("click", function (e) {
      var t = e.target;
      if (!t || t.tagName !== "INPUT") return;
      if (t.id === "pick-shown") {
        boxes().forEach(function (b) { setPicked(b.value, t.checked); });
        show();
        return;
      }
      if (!t.classList.contains("pick")) return;
      var all = boxes();
      // Shift-click: everything between the last box clicked and this one takes this one's state.
      if (e.shiftKey && lastBox && all.indexOf(lastBox) !== -1) {
        var from = all.indexOf(lastBox), to = all.indexOf(t);
        var lo = Math.min(from, to), hi = Math.max(from, to);
        for (var i = lo; i <= hi; i++) setPicked(all[i].value, t.checked);
      } else {
        setPicked(t.value, t.checked);
      }
      lastBox = t;
      var tr = t.closest("tr");
      if (tr) focusRow(tr);
      show();
    });
    if (scope) scope.addEventListener("change", show);
    var toggleHelp = function (open) {
      if (!help) return;
      help.hidden = open === undefined ? !help.hidden : !open;
      if (!help.hidden) { var c = document.getElementById("keys-close"); if (c) c.focus(); }
    };
    var kt = document.getElementById("keys-toggle");
    if (kt) kt.addEventListener("click", function () { toggleHelp(); });
    var kc = document.getElementById("keys-close");
    if (kc) kc.addEventListener("click", function () { toggleHelp(false); });
    if (help) help.addEventListener("click", function (e) { if (e.target === help) toggleHelp(false); });
    var decide = function (buttonId) {
      var button = document.getElementById(buttonId);
      if (!button) return;
      if (!pickedCount && !(scope && scope.checked)) {
        // Nothing selected: the request under the cursor, if it can be decided.
        var tr = focused();
        var box = tr && tr.querySelector("input.pick");
        if (!box) return;
        setPicked(box.value, true);
        show();
      }
      if (bulk.requestSubmit) bulk.requestSubmit(button); else button.click();
    };
    document.addEventListener("keydown", function (e) {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      var t = e.target;
      var typing = t && (t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable ||
        (t.tagName === "INPUT" && t.type !== "checkbox" && t.type !== "radio"));
      if (typing) return;
      if (e.key === "Escape" && help && !help.hidden) { e.preventDefault(); toggleHelp(false); return; }
      if (e.key === "?") { e.preventDefault(); toggleHelp(); return; }
      if (help && !help.hidden) return;
      var list = rows();
      var at = list.indexOf(focused());
      if (e.key === "j" || e.key === "k") {
        if (!list.length) return;
        e.preventDefault();
        var next = e.key === "j" ? Math.min(at + 1, list.length - 1) : Math.max(at - 1, 0);
        focusRow(list[at === -1 ? 0 : next]);
      } else if (e.key === "x") {
        var tr = focused();
        var box = tr && tr.querySelector("input.pick");
        if (!box) return;
        e.preventDefault();
        setPicked(box.value, !picked[box.value]);
        lastBox = box;
        show();
      } else if (e.key === "a" || e.key === "r") {
        e.preventDefault();
        decide(e.key === "a" ? "bulk-approve" : "bulk-reject");
      } else if (e.key === "d") {
        var link = focused() && focused().querySelector("a[href]");
        if (!link) return;
        e.preventDefault();
        location.href = link.getAttribute("href");
      }
    });
    show();
  }

  // Keyboard shortcuts, as in the terminal console: a approve, r revise (where a revision may be
  // asked: the comment box, then Enter), d decline (asks first; Esc goes back). High-risk approvals
  // and a partial selection still ask to confirm.
  document.addEventListener("keydown", function (e) {
    if (bulk) return; // the queue has its own keys (above)
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "Escape" && rejectConfirm && !rejectConfirm.hidden) { e.preventDefault(); askReject(false); return; }
    var t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
    if (e.key === "a") { var b = document.getElementById("btn-approve"); if (b) { e.preventDefault(); b.click(); } return; }
    if (e.key === "d") {
      if (document.getElementById("btn-reject") && askReject(true)) e.preventDefault();
      return;
    }
    if (e.key === "r" && comment && document.getElementById("btn-revise")) { e.preventDefault(); reviseMode(true); comment.focus(); }
  });
})();
`;

export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#111827"/><path d="M9 23V12a7 7 0 0 1 14 0v11" fill="none" stroke="#f59e0b" stroke-width="3"/><rect x="7" y="16" width="18" height="10" rx="2" fill="#f59e0b"/></svg>`;
