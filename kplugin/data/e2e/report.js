// kplugin e2e --report: draws the tables from the page's data (no library), sorts them on a
// header's button, filters them as one types, shows the first rows with a button for the
// rest, and opens a pod's details on click, Enter or Space.
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const el = (tag, attrs, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") e.textContent = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const kid of kids) if (kid != null) e.append(kid);
  return e;
};
const num = (v) => (v == null ? "-" : String(v));
document.getElementById("context").textContent =
  `Kubernetes ${D.kubernetes}; ` + (D.kind === "compare"
    ? `profile ${D.profiles[0]} (plugin) against ${D.profiles[1]} (default)` : `profile ${D.profiles[0]}`);
const summary = document.getElementById("summary");
for (const [name, value] of D.summary) {
  summary.append(el("div", {class: "card", "data-figure": name}, el("b", {text: num(value)}), el("span", {text: name})));
}
const content = document.getElementById("content");

// A table of rows (arrays of cells: {text, cls, sort}), sortable, searchable, paged.
function table(id, caption, headers, rows, onPick) {
  const box = el("section", {id, "aria-label": caption});
  const search = el("input", {type: "search", placeholder: `search ${rows.length} rows`, "aria-label": `search ${caption}`});
  const info = el("span", {class: "muted"});
  const more = el("button", {type: "button"});
  const tbl = el("table", {}, el("caption", {text: caption}));
  const head = el("tr");
  const body = el("tbody");
  let order = null, all = false, shown = rows;
  headers.forEach((h, i) => {
    const button = el("button", {type: "button", text: h, onclick: () => {
      const up = order && order[0] === i ? !order[1] : true;
      order = [i, up];
      head.querySelectorAll("th").forEach((th) => th.removeAttribute("aria-sort"));
      head.children[i].setAttribute("aria-sort", up ? "ascending" : "descending");
      draw();
    }});
    head.append(el("th", {scope: "col"}, button));
  });
  tbl.append(el("thead", {}, head), body);
  function draw() {
    const q = search.value.trim().toLowerCase();
    shown = q ? rows.filter((r) => r.some((c) => String(c.text).toLowerCase().includes(q))) : rows.slice();
    if (order) {
      const [i, up] = order;
      const key = (r) => (r[i].sort !== undefined ? r[i].sort : r[i].text);
      shown.sort((a, b) => { const x = key(a), y = key(b);
        const c = typeof x === "number" && typeof y === "number" ? x - y : String(x ?? "").localeCompare(String(y ?? ""), undefined, {numeric: true});
        return up ? c : -c; });
    }
    body.replaceChildren();
    const limit = all ? shown.length : Math.min(shown.length, D.pageRows);
    for (const r of shown.slice(0, limit)) {
      const tr = el("tr", {});
      r.forEach((c) => tr.append(el("td", {class: c.cls || "", text: num(c.text)})));
      if (onPick) {
        tr.className = "pod"; tr.tabIndex = 0; tr.setAttribute("aria-selected", "false");
        const pick = () => { body.querySelectorAll("tr").forEach((t) => t.setAttribute("aria-selected", "false"));
          tr.setAttribute("aria-selected", "true"); onPick(r.item); };
        tr.addEventListener("click", pick);
        tr.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); pick(); } });
      }
      body.append(tr);
    }
    info.textContent = ` ${limit} of ${shown.length} shown`;
    more.hidden = limit >= shown.length;
    more.textContent = `show all ${shown.length}`;
  }
  more.addEventListener("click", () => { all = true; draw(); });
  search.addEventListener("input", draw);
  box.append(search, info, tbl, more);
  draw();
  return box;
}

function heatmap(p, label) {
  const s = p.scores;
  const box = el("div", {class: "heatmap"});
  if (!s.rows.length) { box.append(el("p", {class: "muted", text: `${label}no scores logged (one feasible node, or none)`})); return box; }
  // the total beside the node, as the text report has it, then each plugin's share
  const cols = ["node", "total", ...s.plugins];
  const tbl = el("table", {class: "scores"}, el("caption", {text: `${label}scores per node and plugin (best first)`}));
  // a plugin's name may break between its words (NodeResources|BalancedAllocation): narrow columns
  const header = (c, k) => k < 2 ? el("th", {scope: "col", text: c})
    : el("th", {scope: "col", class: "plugin", text: c.replace(/([a-z])([A-Z])/g, "$1\u200b$2")});
  tbl.append(el("thead", {}, el("tr", {}, ...cols.map(header))));
  const body = el("tbody");
  const values = (j) => s.rows.map((r) => r[j]).filter((v) => v != null);
  // a row is [node, total, plugin...]: column k of the table is the row's k-th value
  const ranges = cols.map((_, k) => { const v = values(k); return [Math.min(...v), Math.max(...v)]; });
  for (const r of s.rows) {
    const tr = el("tr", {class: r[0] === p.node ? "chosen" : ""});
    tr.append(el("td", {text: r[0] + (r[0] === p.node ? " (chosen)" : "")}));
    cols.slice(1).forEach((_, k) => {
      const j = k + 1;
      const v = r[j]; const [lo, hi] = ranges[j];
      const t = v == null || hi === lo ? 0 : (v - lo) / (hi - lo);
      tr.append(el("td", {class: "num heat", style: `--l: calc(var(--cell-lo) + (var(--cell-hi) - var(--cell-lo)) * ${t.toFixed(3)})`, text: num(v)}));
    });
    body.append(tr);
  }
  tbl.append(body);
  box.append(tbl, el("p", {class: "muted"}, "colour: each column's lowest ", el("span", {class: "legend", role: "img",
    "aria-label": "lighter is lower, darker is higher"}), " highest; the numbers are the scores"
    + (s.more ? `; ${s.more} more node(s) scored (the JSON document has them all)` : "")));
  return box;
}

// The pod's attempts and the events that requeued it, in time order: each with its time
// after the pods' creation began (the scheduler's log), or in the log's order where one has none.
function timeline(p) {
  const when = (at) => (typeof at === "number" ? ` · ${at.toFixed(3)} s` : "");
  const times = p.attemptsAt || [];
  const events = [];
  for (let i = 0; i < p.attempts; i++) {
    events.push({at: times[i], order: 2 * i, node: el("li", {class: "attempt", text: `attempt ${i + 1}${when(times[i])}`})});
  }
  p.requeues.forEach((r, i) => events.push({at: r.at, order: 2 * i + 1,
    node: el("li", {class: "requeue", text: `requeued by ${r.event} → ${r.queue}` + (r.hint ? ` (${r.hint})` : "") + when(r.at)})}));
  const timed = events.every((e) => typeof e.at === "number");
  events.sort((a, b) => (timed && a.at !== b.at ? a.at - b.at : a.order - b.order));
  const steps = events.map((e) => e.node);
  if (p.boundBefore) steps.unshift(el("li", {text: "bound before the replay"}));
  if (!p.boundBefore || !p.node) steps.push(el("li", {class: p.node ? "good" : "bad", text: p.node ? `bound to ${p.node}` : p.where}));
  return el("ol", {class: "timeline", "aria-label": timed ? "attempts and requeues in time order" : "attempts and requeues in order"}, ...steps);
}

function details(p, label) {
  const box = el("div", {class: "pod-details"});
  box.append(el("h3", {text: `${label}${p.pod}: ${p.node ? "on " + p.node : p.where}` + (p.tied ? " (tied best score)" : "")}));
  if (p.reason) box.append(el("p", {text: p.reason}));
  if (p.rejections.length) {
    const tbl = el("table", {class: "rejections"}, el("caption", {text: "filter rejections (nodes, why)"}));
    tbl.append(el("tbody", {}, ...p.rejections.map(([n, why]) => el("tr", {}, el("td", {class: "num", text: String(n)}), el("td", {text: why})))));
    box.append(tbl);
  }
  if (p.nodeRejections && p.nodeRejections.length) {
    const tbl = el("table", {class: "node-rejections"},
      el("caption", {text: "rejected node by node (each node's Filter status, from kplugin's reporting plugin)"
        + (p.moreNodeRejections ? `; ${p.moreNodeRejections} more node(s) in the JSON document` : "")}),
      el("thead", {}, el("tr", {}, ...["node", "plugin", "why"].map((h) => el("th", {scope: "col", text: h})))));
    tbl.append(el("tbody", {}, ...p.nodeRejections.map((r) => el("tr", {},
      el("td", {text: r.node}), el("td", {text: r.plugin || "(Filter did not run)"}), el("td", {text: r.reason || r.code})))));
    box.append(tbl);
  }
  box.append(timeline(p), heatmap(p, label));
  return box;
}

function podRow(p) {
  const row = [
    {text: p.pod}, {text: p.where, cls: p.node ? "" : "bad"},
    {text: p.ok ? "yes" : "NO", cls: p.ok ? "good" : "bad"},
    {text: p.attempts, cls: "num", sort: p.attempts}, {text: p.requeues.length, cls: "num", sort: p.requeues.length},
    {text: p.reason || ""},
  ];
  row.item = p;
  return row;
}

const detail = el("section", {id: "details", "aria-live": "polite"});
if (D.kind === "replay") {
  content.append(el("h2", {text: "Pods"}),
    table("pods", "each pod: where it landed or why not (pick a row for its scores)",
      ["pod", "where", "as expected", "attempts", "requeues", "why not"], D.pods.map(podRow),
      (p) => detail.replaceChildren(details(p, ""))), detail);
  const first = D.pods.find((p) => p.scores.rows.length) || D.pods[0];
  if (first) {
    detail.append(details(first, ""));
    const row = document.querySelectorAll("#pods tbody tr")[D.pods.indexOf(first)];
    if (row) row.setAttribute("aria-selected", "true");
  }
} else {
  const rows = D.changes.map((c) => { const r = [{text: c.pod}, {text: c.change}, {text: c.plugin.where},
    {text: c.default.where}]; r.item = c; return r; });
  content.append(el("h2", {text: "What changed"}),
    table("changes", "pods placed differently (pick a row for both profiles' scores)",
      ["pod", "change", "plugin profile", "default profile"], rows,
      (c) => detail.replaceChildren(el("div", {class: "side"}, details(c.plugin, "plugin: "), details(c.default, "default: ")))),
    detail);
  if (D.changes.length) detail.append(el("div", {class: "side"}, details(D.changes[0].plugin, "plugin: "), details(D.changes[0].default, "default: ")));
  for (const label of ["plugin", "default"]) {
    const v = D.preempted[label];
    content.append(el("h2", {text: `Preempted under the ${label} profile`}), v.length
      ? table(`preempted-${label}`, `pods preempted (${label})`, ["pod", "by", "node"], v.map((x) => [{text: x.pod}, {text: x.by}, {text: x.node}]))
      : el("p", {class: "muted", text: "none"}));
  }
  content.append(el("h2", {text: "Each node's use under both profiles"}), D.nodeUse.length
    ? table("node-use", "node use (resources that changed)", ["node", "resource", "allocatable", "plugin", "default"],
        D.nodeUse.map((u) => [{text: u.node}, {text: u.resource}, {text: u.allocatable, cls: "num"},
          {text: u.plugin, cls: "num"}, {text: u.default, cls: "num"}]))
    : el("p", {class: "muted", text: "no node's use changed"}));
}
// A group's placement: the one taken, and every scored placement's total (the JSON has each plugin's).
function placementOf(x) {
  const scores = (x.placementScores || []).map((s) => `${s.placement} ${s.total}`).join(", ");
  const taken = x.placement || (x.placementsTried && x.placementsTried.length ? `tried: ${x.placementsTried.join(", ")}` : "");
  return taken + (scores ? ` (scores: ${scores})` : "");
}
if (D.groups.length) {
  const g = D.kind === "compare" ? D.groups.map((x) => ({...x.plugin, default: x.default})) : D.groups;
  content.append(el("h2", {text: "Pod groups"}), table("groups", "pod groups",
    ["group", "gang minimum", "pods", "bound", "outcome", "attempts", "nodes"]
      .concat(D.kind === "compare" ? ["default: bound", "default: nodes"] : []).concat(["placement"])
      .concat(D.kind === "compare" ? ["default: placement"] : []),
    g.map((x) => [{text: x.group}, {text: x.minCount, cls: "num"}, {text: x.pods, cls: "num"}, {text: x.bound, cls: "num"},
      {text: x.outcome + (x.placed || x.bound ? "" : " (held back)")},
      {text: x.attempts + (x.backoffRetries ? ` (${x.backoffRetries} after a backoff)` : "")
        + ((x.requeues || []).length ? `; requeued by ${x.requeues.map((r) => r.event).join(", ")}` : ""), cls: "num", sort: x.attempts},
      {text: x.nodes.join(", ")}]
      .concat(x.default ? [{text: x.default.bound, cls: "num"}, {text: x.default.nodes.join(", ")}] : [])
      .concat([{text: placementOf(x)}]).concat(x.default ? [{text: placementOf(x.default)}] : []))));
}
