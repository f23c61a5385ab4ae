// Klassik's console: polls the serving broker's /api/v1/ JSON once a
// second and redraws. No framework, no build step.
"use strict";

// A poll starts POLL_MS after the previous one ended, so polls never overlap
// and a change shows within about one poll plus one request.
const POLL_MS = 500;
let selected = null; // {topic, partition, broker} of the segment view
let lastReplicas = [];

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "onclick") e.onclick = v;
    else if (k === "style") e.style.cssText = v;
    else e.setAttribute(k, v);
  }
  for (const k of kids) {
    if (k === null || k === undefined) continue;
    e.append(k instanceof Node ? k : String(k));
  }
  return e;
}

function replace(id, ...kids) {
  const n = document.getElementById(id);
  n.replaceChildren(...kids);
}

async function getJSON(path) {
  const ctl = new AbortController();
  const t = setTimeout(() => ctl.abort(), 4000);
  try {
    const r = await fetch(path, { signal: ctl.signal, cache: "no-store" });
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || r.statusText);
    return body;
  } finally {
    clearTimeout(t);
  }
}

function fmtTime(s) {
  const d = new Date(s);
  return d.toLocaleTimeString([], { hour12: false }) + "." + String(d.getMilliseconds()).padStart(3, "0");
}

function drawCluster(c, reps) {
  document.getElementById("cluster-id").textContent = c.cluster_id;
  document.getElementById("controller-id").textContent = c.controller;
  document.getElementById("controller-epoch").textContent = c.controller_epoch;
  document.getElementById("served-by").textContent = c.served_by;
  const live = new Map((c.brokers || []).map(b => [b.id, b]));
  const known = new Set(live.keys());
  for (const t of c.topics || []) for (const p of t.partitions) for (const r of p.replicas) known.add(r);
  const ids = [...known].sort((a, b) => a - b);
  replace("brokers", ...ids.map(id => {
    const b = live.get(id);
    const cls = "broker" + (b ? "" : " dead") + (id === c.controller ? " controller" : "");
    return el("div", { class: cls, "data-broker": id, "data-live": b ? "true" : "false" },
      el("b", {}, "broker " + id), b && b.rack ? " rack " + b.rack : "", id === c.controller ? " (controller)" : "",
      el("div", { class: "ep" }, b ? b.endpoints.map(e => e.listener + "://" + e.host + ":" + e.port).join(" ") : "not registered (dead)"));
  }));

  const byTP = new Map();
  for (const r of reps) {
    const k = r.topic + "-" + r.partition;
    if (!byTP.has(k)) byTP.set(k, new Map());
    byTP.get(k).set(r.broker, r);
  }
  const topics = (c.topics || []).filter(t => !t.name.startsWith("__"));
  const internal = (c.topics || []).length - topics.length;
  if (!selected && topics.length && topics[0].partitions.length) {
    const p0 = topics[0].partitions[0];
    selected = { topic: topics[0].name, partition: p0.partition, broker: p0.replicas.includes(c.served_by) ? c.served_by : p0.replicas[0] };
    setTimeout(pollSegments, 0);
  }
  replace("topics", ...topics.map(t => el("div", { class: "topic", "data-topic": t.name },
    el("h4", {}, t.name),
    ...t.partitions.map(p => drawPartition(t.name, p, byTP.get(t.name + "-" + p.partition) || new Map(), live)))),
    internal ? el("div", { class: "ep" }, internal + " internal topic(s) not drawn") : "");
}

function drawPartition(topic, p, reps, live) {
  let max = 1;
  for (const r of reps.values()) max = Math.max(max, r.log_end_offset);
  const under = p.has_state && p.isr.length < p.replicas.length;
  const offline = p.has_state && p.leader < 0;
  const meta = el("div", { class: "meta" },
    el("b", {}, topic + "-" + p.partition), el("br"),
    "replicas [" + p.replicas.join(",") + "]", el("br"),
    "leader ", el("b", { class: "leader" }, p.leader), " epoch ", el("b", { class: "leader-epoch" }, p.leader_epoch), el("br"),
    "ISR [", el("b", { class: "isr" }, p.isr.join(",")), "]");
  const bars = el("div", { class: "bars" }, ...p.replicas.map(id => {
    const r = reps.get(id);
    const isSel = selected && selected.topic === topic && selected.partition === p.partition && selected.broker === id;
    if (!r) {
      return el("div", { class: "bar missing" + (isSel ? " selected" : ""), "data-replica": id },
        el("span", { class: "lbl" }, "broker " + id + (live.has(id) ? ": no local log" : ": broker down")));
    }
    const leo = 100 * r.log_end_offset / max, hw = 100 * r.high_watermark / max;
    return el("div", {
      class: "bar" + (r.is_leader ? " leader" : "") + (isSel ? " selected" : ""), "data-replica": id,
      "data-leo": r.log_end_offset, "data-hw": r.high_watermark,
      title: "click: segments of broker " + id + "'s replica",
      onclick: () => { selected = { topic, partition: p.partition, broker: id }; pollSegments(); },
    },
      el("div", { class: "leo", style: "width:" + leo + "%" }),
      el("div", { class: "hw", style: "left:calc(" + hw + "% - 1px)" }),
      el("span", { class: "lbl" }, "broker " + id + (r.is_leader ? " (leader)" : "") + "  LEO " + r.log_end_offset + "  HW " + r.high_watermark));
  }));
  return el("div", {
    class: "part" + (under ? " under" : "") + (offline ? " offline" : ""),
    "data-tp": topic + "-" + p.partition, "data-isr": p.isr.join(","), "data-leader": p.leader, "data-leader-epoch": p.leader_epoch,
  }, meta, bars);
}

function drawController(h) {
  document.getElementById("queue-size").textContent = h.queue_size;
  document.getElementById("ctl-source").textContent = h.error ? "(" + h.error + ")" :
    "(history of broker " + h.source + ", controller epoch " + h.controller_epoch + (h.active ? ", active" : ", not active") + ")";
  const tb = document.querySelector("#events tbody");
  tb.replaceChildren(...(h.events || []).slice(-40).reverse().map(e => el("tr", {},
    el("td", {}, fmtTime(e.enqueued)), el("td", {}, e.name + (e.preempted ? " (preempted)" : "")), el("td", {}, e.state),
    el("td", {}, e.queue_ms.toFixed(1)), el("td", {}, e.process_ms.toFixed(1)))));
  const cb = document.querySelector("#changes tbody");
  cb.replaceChildren(...(h.state_changes || []).slice(-100).reverse().map(s => el("tr", {},
    el("td", {}, fmtTime(s.time)),
    el("td", {}, s.kind === "replica" ? "replica " + s.replica + " of " + s.topic + "-" + s.partition : s.topic + "-" + s.partition),
    el("td", {}, s.from), el("td", {}, s.to), el("td", { class: "why", title: s.detail || "" }, s.reason))));
}

function drawGroup(x) {
  const members = x.members.map(m => el("tr", {},
    el("td", {}, m.id === x.leader ? m.id + " (leader)" : m.id),
    el("td", {}, m.client_host),
    el("td", {}, Object.entries(m.assignment).map(([t, ps]) => t + " [" + ps.join(",") + "]").join(" "))));
  const offsets = x.offsets.map(o => el("tr", {},
    el("td", {}, o.topic + "-" + o.partition),
    el("td", {}, "committed " + o.committed),
    el("td", {}, "lag " + (o.lag < 0 ? "?" : o.lag))));
  return el("div", { class: "group", "data-group": x.group, "data-state": x.state },
    el("b", {}, x.group), " ", el("span", { class: "state " + x.state }, x.state),
    " generation " + x.generation + ", coordinator " + x.coordinator + (x.protocol ? ", " + x.protocol : ""),
    el("table", {}, el("tbody", {}, ...members), el("tbody", {}, ...offsets)));
}

function drawGroups(g) {
  const gs = g.groups || [];
  if (!gs.length) { replace("groups", el("div", { class: "ep" }, "no groups")); return; }
  replace("groups", ...gs.map(drawGroup));
}

async function pollSegments() {
  if (!selected) return;
  const s = selected;
  document.getElementById("seg-title").textContent = s.topic + "-" + s.partition + " on broker " + s.broker;
  try {
    const d = await getJSON("api/v1/segments?topic=" + encodeURIComponent(s.topic) + "&partition=" + s.partition + "&broker=" + s.broker);
    replace("segments",
      el("div", { class: "ep" }, d.dir + "  log start " + d.log_start_offset + "  LEO " + d.log_end_offset + "  HW " + d.high_watermark),
      ...d.segments.map(x => el("div", { class: "segment", "data-base": x.base_offset },
        el("b", {}, String(x.base_offset).padStart(20, "0") + ".log"), el("br"),
        x.size + " bytes, " + x.index_entries + " index entries",
        el("div", { class: "idx" }, el("table", {}, el("tbody", {},
          ...x.index.map(e => el("tr", {}, el("td", {}, e.offset), el("td", {}, "→ " + e.position)))))))));
  } catch (e) {
    replace("segments", el("div", { class: "ep" }, "segments: " + e.message));
  }
}

async function poll() {
  const status = document.getElementById("status");
  try {
    const [c, r, h, g] = await Promise.all([
      getJSON("api/v1/cluster"), getJSON("api/v1/replicas"), getJSON("api/v1/controller"), getJSON("api/v1/groups")]);
    lastReplicas = r.replicas || [];
    drawCluster(c, lastReplicas);
    drawController(h);
    drawGroups(g);
    const down = (r.brokers || []).filter(b => !b.ok).map(b => b.id + ": " + b.error);
    const stale = c.stale ? "; stale, the last read failed: " + c.stale : "";
    status.textContent = "updated " + fmtTime(c.time) + stale + (down.length ? "; not answering: " + down.join("; ") : "");
    status.className = "status" + (down.length || stale ? " bad" : "");
  } catch (e) {
    status.textContent = "poll failed: " + e.message;
    status.className = "status bad";
  } finally {
    setTimeout(poll, POLL_MS);
  }
}

async function segmentsLoop() {
  await pollSegments();
  setTimeout(segmentsLoop, 4 * POLL_MS);
}

poll();
segmentsLoop();
