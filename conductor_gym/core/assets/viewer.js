(function () {
  "use strict";
  const t0 = performance.now();
  const D = JSON.parse(document.getElementById("viewer-data").textContent);
  const parseMs = performance.now() - t0;
  // The data keeps each dict's keys and each repeated text once (render_html._interned).
  const T = D.texts || [], SHAPES = D.shapes || null;
  function restore(x) {
    if (Array.isArray(x)) return x.map(restore);
    if (x === null || typeof x !== "object") return x;
    if (typeof x.$t === "number") return T[x.$t];
    if (typeof x.$o === "number" && SHAPES) {
      const keys = SHAPES[x.$o], out = {};
      for (let i = 0; i < keys.length; i++) out[keys[i]] = restore(x.v[i]);
      return out;
    }
    return x;
  }
  const E = SHAPES ? restore(D.episodes) : D.episodes;
  const PAGE = 50;
  const main = document.querySelector("main");
  const SVGNS = "http://www.w3.org/2000/svg";
  let arrowIds = 0;

  const has = (v) => v !== null && v !== undefined;
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (!has(v) || v === false) continue;
      if (k === "text") el.textContent = String(v);
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, String(v));
    }
    for (const kid of kids.flat(Infinity)) {
      if (!has(kid) || kid === false) continue;
      el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return el;
  }
  function s(tag, attrs, ...kids) {
    const el = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") el.textContent = String(v);
      else el.setAttribute(k, String(v));
    }
    for (const kid of kids.flat(Infinity)) if (kid) el.append(kid);
    return el;
  }
  const pct = (x) => has(x) ? (100 * x).toFixed(1) : "n/a";
  const num = (x, d) => has(x) ? Number(x).toFixed(d) : "n/a";
  const tok = (x) => Math.round(x).toLocaleString("en-US");
  const num3 = (x) => num(x, 3);
  const pm = (se, f) => has(se) ? " \u00b1 " + f(se) : "";
  function money(x) {
    if (!has(x)) return "n/a";
    if (x === 0) return "$0";
    return x >= 0.01 ? "$" + x.toFixed(3) : "$" + x.toPrecision(2);
  }
  function badge(outcome) {
    return h("span", {class: "badge " + (outcome || "none"), text: outcome || "open"});
  }
  function clip(text, n) {
    text = String(text || "").replace(/\s+/g, " ").trim();
    return text.length > n ? text.slice(0, n - 1) + "\u2026" : text;
  }
  const text = (cls, value) => h("pre", {class: "text " + cls, text: value});
  const note = (value) => h("p", {class: "note", text: value});
  // A run's page keeps each task's question once, in D.tasks; an episode page inlines it.
  function taskField(e, name) {
    if (has(e[name])) return e[name];
    const task = D.tasks && has(e.task) ? D.tasks[e.task] : null;
    return task ? task[name] : null;
  }
  function model(id, pool, worker) {
    const name = has(worker) ? worker : (pool && id >= 0 && id < pool.length ? pool[id] : null);
    return h("span", {class: "model"}, h("span", {class: "id", text: "Model " + id}),
      name ? " \u00b7 " : null, name ? h("span", {class: "name", text: name}) : null);
  }

  // ---------------------------------------------------------------- run and summary
  function drawRun() {
    if (!D.run) return;
    const box = document.getElementById("run");
    for (const [k, v] of Object.entries(D.run)) {
      if (has(v) && v !== "") box.append(h("span", {}, h("b", {text: k + ": "}), String(v)));
    }
  }
  function histogram(title, id, rows) {
    const most = Math.max(1, ...rows.map((r) => r[1]));
    return h("div", {class: "hist", id: id}, h("h3", {text: title}), rows.map((r) => {
      const width = "display:block;width:" + (100 * r[1] / most).toFixed(1) + "%";
      const count = r[1].toLocaleString("en-US") + (has(r[2]) ? " / " + r[2] : "");
      return h("div", {class: "bar-row", "data-label": r[0], "data-count": r[1]},
        h("span", {class: "label", title: r[0], text: r[0]}),
        h("span", {class: "track"}, h("span", {class: "bar", style: width})),
        h("span", {class: "count", text: count}));
    }));
  }
  const COLUMNS = [
    ["n", "Episodes", (r) => r.n],
    ["accuracy", "Accuracy (%)", (r) => pct(r.accuracy) + pm(r.accuracy_se, pct)],
    ["mean_reward", "Reward", (r) => num3(r.mean_reward) + pm(r.mean_reward_se, num3)],
    ["parse_failure_rate", "Invalid plans (%)", (r) => pct(r.parse_failure_rate)],
    ["infra_failures", "Infra failures", (r) => r.infra_failures],
    ["mean_steps", "Steps / plan", (r) => num(r.mean_steps, 2)],
    ["mean_worker_calls", "Calls / ep.", (r) => num(r.mean_worker_calls, 2)],
    ["tokens_per_sample", "Tokens / ep.", (r) => tok(r.tokens_per_sample)],
    ["cost_per_sample_usd", "Cost / ep.", (r) => money(r.cost_per_sample_usd)],
  ];
  function drawSummary() {
    const S = D.summary;
    if (!S) return;
    const body = S.rows.map((r) => h("tr", {class: "group-" + r.group, "data-group": r.group,
        "data-name": r.name, "data-n": r.n, "data-accuracy": r.accuracy},
      h("td", {text: r.name}), h("td", {class: "note", text: r.group}),
      COLUMNS.map(([key, , show]) => h("td", {class: "num", "data-key": key, text: show(r)}))));
    const head = h("tr", {}, h("th", {text: "Group"}), h("th", {text: "By"}),
      COLUMNS.map(([, label]) => h("th", {class: "num", text: label})));
    main.append(h("section", {id: "summary", class: "card"}, h("h2", {text: "Summary"}),
      h("table", {id: "summary-table"}, h("thead", {}, head), h("tbody", {}, body)),
      h("div", {class: "hists"},
        histogram("Steps per episode (episodes)", "steps-hist", S.steps_histogram),
        histogram("Worker use (steps / episodes)", "worker-hist", S.worker_use))));
  }

  // ---------------------------------------------------------------------- filters
  const FILTERS = [
    ["benchmark", "Benchmark", (e) => [e.benchmark]],
    ["family", "Family", (e) => [e.domain]],
    ["outcome", "Outcome", (e) => [e.outcome]],
    ["worker", "Worker used", (e) => e.workers],
    ["steps", "Steps", (e) => [String(e.steps)]],
    ["parse", "Parse failure", (e) => [e.parse_error || "(none)"]],
  ];
  const OUTCOME_ORDER = {correct: 0, wrong: 1, invalid: 2, error: 3};
  const SORTS = {
    "": ["file order", null],
    outcome: ["outcome", (e) => has(OUTCOME_ORDER[e.outcome]) ? OUTCOME_ORDER[e.outcome] : 9],
    "-reward": ["reward, highest first", (e) => -(has(e.reward) ? e.reward : -Infinity)],
    reward: ["reward, lowest first", (e) => has(e.reward) ? e.reward : Infinity],
    "-cost": ["cost, highest first", (e) => -e.cost_usd],
    cost: ["cost, lowest first", (e) => e.cost_usd],
    "-steps": ["steps, most first", (e) => -e.steps],
    steps: ["steps, fewest first", (e) => e.steps],
    "-tokens": ["tokens, most first", (e) => -(e.prompt_tokens + e.completion_tokens)],
  };
  const state = {q: "", page: 0, ep: null, sort: "", cmp: null};
  for (const [key] of FILTERS) state[key] = "";
  const haystack = E.map((e) => (String(taskField(e, "question") || "") + "\n"
    + String(e.task_id || "")).toLowerCase());
  let matches = [];

  function readHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    for (const [key] of FILTERS) state[key] = p.get(key) || "";
    state.q = p.get("q") || "";
    state.sort = has(SORTS[p.get("sort")]) ? p.get("sort") : "";
    const cmp = parseInt(p.get("cmp"), 10);
    state.cmp = cmp >= 0 && cmp < E.length ? cmp : null;
    state.page = Math.max(0, parseInt(p.get("page") || "0", 10) || 0);
    const ep = parseInt(p.get("ep"), 10);
    state.ep = ep >= 0 && ep < E.length ? ep : null;
  }
  function writeHash() {
    const p = new URLSearchParams();
    for (const [key] of FILTERS) if (state[key]) p.set(key, state[key]);
    if (state.q) p.set("q", state.q);
    if (state.sort) p.set("sort", state.sort);
    if (state.page) p.set("page", String(state.page));
    if (state.ep !== null) p.set("ep", String(state.ep));
    if (state.cmp !== null) p.set("cmp", String(state.cmp));
    history.replaceState(null, "", "#" + p.toString());
  }
  function applyFilters() {
    const t = performance.now();
    const active = FILTERS.filter(([key]) => state[key]);
    const terms = state.q.toLowerCase().split(/\s+/).filter(Boolean);
    matches = [];
    for (let i = 0; i < E.length; i++) {
      let ok = active.every(([key, , get]) => get(E[i]).map(String).includes(state[key]));
      if (ok && terms.length) ok = terms.every((term) => haystack[i].includes(term));
      if (ok) matches.push(i);
    }
    const key = SORTS[state.sort][1];
    if (key) {
      const k = new Map(matches.map((i) => [i, key(E[i])]));
      matches.sort((a, b) => (k.get(a) - k.get(b)) || (a - b));
    }
    window.viewer.lastFilterMs = performance.now() - t;
    window.viewer.matches = matches.length;
  }
  function drawFilters() {
    const box = h("div", {id: "filters"});
    for (const [key, label, get] of FILTERS) {
      const counts = new Map();
      for (const e of E) {
        for (const v of get(e)) if (has(v)) counts.set(String(v), (counts.get(String(v)) || 0) + 1);
      }
      const order = key === "steps" ? (a, b) => a - b : (a, b) => a.localeCompare(b);
      const change = (ev) => { state[key] = ev.target.value; state.page = 0; refresh(); };
      const select = h("select", {id: "filter-" + key, "data-filter": key, onchange: change},
        h("option", {value: "", text: "any"}),
        [...counts.keys()].sort(order).map((v) =>
          h("option", {value: v, text: v + " (" + counts.get(v) + ")"})));
      select.value = state[key];
      box.append(h("label", {}, label, select));
    }
    const search = h("input", {type: "search", id: "search",
      placeholder: "question text or task id",
      oninput: (ev) => { state.q = ev.target.value; state.page = 0; refresh(); }});
    search.value = state.q;
    const sort = h("select", {id: "sort",
      onchange: (ev) => { state.sort = ev.target.value; state.page = 0; refresh(); }},
      Object.entries(SORTS).map(([v, [label]]) => h("option", {value: v, text: label})));
    sort.value = state.sort;
    box.append(h("label", {}, "Search", search), h("label", {}, "Sort by", sort),
      h("span", {id: "match-count"}));
    return box;
  }

  // ----------------------------------------------------------------------- export
  const CSV_COLUMNS = ["index", "benchmark", "domain", "task_id", "task_index", "repeat", "seed",
    "outcome", "reward", "steps", "worker_calls", "prompt_tokens", "completion_tokens",
    "cost_usd", "latency_s", "parse_error", "workers", "question", "reference", "answer"];
  function csvCell(v) {
    if (!has(v)) return "";
    const t = Array.isArray(v) ? v.join(" ") : String(v);
    return /[",\r\n]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
  }
  function exportRow(i) {
    const e = E[i];
    return {index: i, ...e, question: taskField(e, "question"),
      reference: taskField(e, "reference"), grader: taskField(e, "grader")};
  }
  // The episodes the filters and the sort give, as a download (a blob: nothing is sent);
  // window.viewer.lastExport keeps what was offered.
  function exportMatches(kind) {
    const rows = matches.map(exportRow);
    let body, type;
    if (kind === "json") {
      body = JSON.stringify(rows, null, 1);
      type = "application/json";
    } else {
      body = [CSV_COLUMNS.join(","),
        ...rows.map((r) => CSV_COLUMNS.map((c) => csvCell(r[c])).join(","))].join("\r\n") + "\r\n";
      type = "text/csv";
    }
    const name = "episodes." + kind;
    window.viewer.lastExport = {name: name, type: type, rows: rows.length, text: body};
    const url = URL.createObjectURL(new Blob([body], {type: type}));
    const link = h("a", {href: url, download: name});
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }
  function drawListSection() {
    const turn = (by) => () => { state.page += by; refresh(); };
    const columns = ["#", "Task", "Family", "Outcome", "Reward", "Steps", "Workers", "Tokens",
      "Cost"];
    main.append(h("section", {id: "episodes", class: "card"}, h("h2", {text: "Episodes"}),
      drawFilters(),
      h("div", {id: "tools"},
        ["json", "csv"].map((kind) => h("button", {id: "export-" + kind,
          text: "Export " + kind.toUpperCase(), onclick: () => exportMatches(kind),
          title: "download the listed episodes (every page) as " + kind.toUpperCase()})),
        h("span", {class: "note", text: "Click a row to see it; shift-click a second row to "
          + "compare the two side by side."})),
      h("table", {id: "episode-list"},
        h("thead", {}, h("tr", {}, columns.map((t) => h("th", {text: t})))), h("tbody", {})),
      h("div", {class: "pager"},
        h("button", {id: "prev", text: "\u2190 previous", onclick: turn(-1)}),
        h("span", {id: "page-info"}),
        h("button", {id: "next", text: "next \u2192", onclick: turn(1)}))));
  }
  function listRow(i) {
    const e = E[i];
    const pick = (ev) => {
      if (ev.shiftKey && state.ep !== null && state.ep !== i) state.cmp = i;
      else { state.ep = i; state.cmp = null; }
      writeHash(); drawList(); drawDetail();
    };
    const label = e.task_id + (has(e.repeat) ? " \u00b7 r" + e.repeat : "");
    const picked = i === state.ep || i === state.cmp;
    return h("tr", {"data-episode": i, class: picked ? "selected" : null, onclick: pick},
      h("td", {class: "num", text: i}),
      h("td", {title: clip(taskField(e, "question"), 300), text: label}),
      h("td", {text: e.domain}), h("td", {}, badge(e.outcome)),
      h("td", {class: "num", text: has(e.reward) ? num(e.reward, 2) : ""}),
      h("td", {class: "num", text: e.steps}),
      h("td", {text: clip((e.workers || []).join(", "), 60)}),
      h("td", {class: "num", text: tok(e.prompt_tokens + e.completion_tokens)}),
      h("td", {class: "num", text: money(e.cost_usd)}));
  }
  function drawList() {
    const pages = Math.max(1, Math.ceil(matches.length / PAGE));
    state.page = Math.min(Math.max(0, state.page), pages - 1);
    const shown = matches.slice(state.page * PAGE, (state.page + 1) * PAGE);
    document.querySelector("#episode-list tbody").replaceChildren(...shown.map(listRow));
    const count = document.getElementById("match-count");
    const n = (x) => x.toLocaleString("en-US");
    count.textContent = n(matches.length) + " of " + n(E.length) + " episodes";
    count.dataset.matches = matches.length;
    count.dataset.total = E.length;
    document.getElementById("page-info").textContent = "page " + (state.page + 1) + " of " + pages;
    document.getElementById("prev").disabled = state.page === 0;
    document.getElementById("next").disabled = state.page >= pages - 1;
  }
  function refresh() { applyFilters(); writeHash(); drawList(); }

  // ------------------------------------------------------------------- plan graph
  function wrap(value, width, lines) {
    const words = String(value).replace(/\s+/g, " ").trim().split(" ");
    const out = [];
    let line = "";
    for (const w of words) {
      if ((line + " " + w).trim().length <= width) { line = (line + " " + w).trim(); continue; }
      if (line) out.push(line);
      line = w.length > width ? w.slice(0, width - 1) + "\u2026" : w;
      if (out.length === lines) break;
    }
    if (out.length < lines && line) out.push(line);
    if (out.length === lines && words.join(" ").length > out.join(" ").length) {
      out[lines - 1] = out[lines - 1].slice(0, width - 1).replace(/[\s\u2026]+$/, "") + "\u2026";
    }
    return out.slice(0, lines);
  }
  // Steps left to right; an arrow from each step a step sees: straight to the next box,
  // an arc above the boxes for a longer reach. The final step's box is drawn heavier.
  function planGraph(plan, visible, pool, steps) {
    const n = plan.model_id.length;
    const W = 188, H = 96, GAP = 58, LIFT = 16;
    let reach = 1;
    visible.forEach((seen, i) => seen.forEach((j) => { reach = Math.max(reach, i - j); }));
    const top = 14 + LIFT * (reach - 1) + (reach > 1 ? 12 : 0);
    const width = n * W + (n - 1) * GAP + 20, height = top + H + 30;
    const id = "arrow-" + (++arrowIds);
    const x = (i) => 10 + i * (W + GAP);
    const svgEl = s("svg", {class: "plan-graph", width: width, height: height,
      viewBox: "0 0 " + width + " " + height, role: "img", "data-steps": n},
      s("defs", {}, s("marker", {id: id, viewBox: "0 0 10 10", refX: 9, refY: 5,
        markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse"},
        s("path", {d: "M0,0 L10,5 L0,10 z", fill: "#7d8699"}))));
    let edges = 0;
    visible.forEach((seen, i) => seen.forEach((j) => {
      const mid = top + H / 2;
      let d = "M" + (x(j) + W) + "," + mid + " L" + (x(i) - 2) + "," + mid;
      if (i - j > 1) {
        // Arcs leave a box right of its middle and land left of it, one slot per source.
        const x1 = x(j) + W * 0.6, x2 = x(i) + Math.min(W - 12, 14 + 16 * j);
        const lift = top - 10 - LIFT * (i - j - 1);
        d = "M" + x1 + "," + top + " C" + x1 + "," + lift + " " + x2 + "," + lift + " "
          + x2 + "," + (top - 2);
      }
      edges++;
      svgEl.append(s("path", {class: "edge", d: d, "marker-end": "url(#" + id + ")",
        "data-from": j, "data-to": i}));
    }));
    for (let i = 0; i < n; i++) {
      const m = plan.model_id[i];
      let worker = steps && steps[i] ? steps[i].worker : null;
      if (!has(worker) && pool && m >= 0 && m < pool.length) worker = pool[m];
      const last = i === n - 1;
      const head = "Step " + i + " \u00b7 Model " + m;
      const g = s("g", {class: "step" + (last ? " final" : ""), "data-step": i,
        "data-worker": worker || "", transform: "translate(" + x(i) + "," + top + ")"},
        s("title", {text: head + (worker ? " (" + worker + ")" : "") + "\n" + plan.subtasks[i]}),
        s("rect", {width: W, height: H, rx: 6}),
        s("text", {class: "head", x: 8, y: 16, text: head}),
        s("text", {class: "worker", x: 8, y: 31, text: clip(worker || "?", 28)}));
      wrap(plan.subtasks[i], 27, 4).forEach((line, k) =>
        g.append(s("text", {x: 8, y: 48 + 13 * k, text: line})));
      if (last) {
        g.append(s("text", {class: "final-label", x: 0, y: H + 16, text: "\u2605 final answer"}));
      }
      svgEl.append(g);
    }
    svgEl.setAttribute("data-edges", edges);
    return h("div", {class: "graph-wrap"}, svgEl);
  }

  // ---------------------------------------------------------------------- detail
  const MAX_TEXT = 20000;
  function cut(value) {
    if (value.length <= MAX_TEXT) return value;
    const more = (value.length - MAX_TEXT).toLocaleString("en-US");
    return value.slice(0, MAX_TEXT) + "\n\u2026 (" + more + " more characters)";
  }
  function completionBlock(r) {
    const all = r.completion;
    if (!has(all)) return note("The completion is not recorded.");
    if (r.parse_error && r.parse_error.span) {
      const [a, b] = r.parse_error.span;
      return h("pre", {class: "text completion"}, cut(all.slice(0, a)),
        h("mark", {class: "offending", "data-start": a, "data-end": b, text: all.slice(a, b)}),
        cut(all.slice(b)));
    }
    if (!has(r.lists_at)) return text("completion", cut(all));
    return h("div", {}, h("div", {class: "note", text: "reasoning"}),
      text("completion reasoning", cut(all.slice(0, r.lists_at)) || "(none)"),
      h("div", {class: "note", text: "the three lists"}),
      text("lists", cut(all.slice(r.lists_at))));
  }
  function stepRow(plan, visible, steps, pool, i) {
    const m = plan.model_id[i];
    const st = steps ? steps[i] : null;
    const seen = st ? st.visible : visible[i];
    const figure = (f) => h("td", {class: "num", text: st ? f(st) : ""});
    return h("tr", {"data-step": i},
      h("td", {class: "num", text: i}),
      h("td", {}, model(m, pool, st ? st.worker : null)),
      h("td", {text: seen.length ? seen.join(", ") : "\u2013"}),
      h("td", {}, text("subtask", plan.subtasks[i])),
      h("td", {}, st ? text("response", st.response) : h("span", {class: "note", text: "not run"})),
      figure((x) => tok(x.prompt_tokens) + " / " + tok(x.completion_tokens)),
      figure((x) => money(x.cost_usd)),
      figure((x) => num(x.latency_s, 2) + " s"),
      figure((x) => x.attempts + (x.cached ? " (cached)" : "")));
  }
  function planBlock(plan, visible, steps, pool, recursive) {
    if (!plan) return null;
    if (!plan.model_id.length) return note("Three empty lists: the current answer is final.");
    const columns = ["Step", "Worker", "Sees", "Subtask", "Response", "Tokens in / out", "Cost",
      "Latency", "Calls"];
    const rows = plan.model_id.map((_, i) => stepRow(plan, visible, steps, pool, i));
    const all = recursive && plan.access_list.includes("all");
    return h("div", {}, planGraph(plan, visible, pool, steps),
      all ? note("In a recursive round, \"all\" also shows the previous round's final step.")
        : null,
      h("table", {class: "steps"},
        h("thead", {}, h("tr", {}, columns.map((t) => h("th", {text: t})))),
        h("tbody", {}, rows)));
  }
  function roundBlock(r, e, many) {
    const title = "Round " + r.index + (r.index === 0 ? " (the first plan)" : " (recursive)");
    const error = r.parse_error;
    return h("div", {class: "round", "data-round": r.index},
      many ? h("h3", {text: title}) : null,
      h("h3", {text: "Completion"}), completionBlock(r),
      error ? h("div", {class: "error-box parse-error", "data-reason": error.reason},
        h("b", {text: "Invalid plan: " + error.reason}), h("div", {text: error.detail})) : null,
      r.plan ? [h("h3", {text: "Plan"}),
        planBlock(r.plan, r.visible, r.steps, e.pool, r.index > 0)] : null,
      r.self_calls.map((c, k) => h("div", {class: "inner", "data-inner": k},
        h("h3", {text: "Inner call " + k + ": the conductor planned for a step"}),
        text("question", c.question || ""),
        h("details", {}, h("summary", {text: "its completion"}),
          text("completion", c.completion || "")),
        planBlock(c.plan, c.visible, c.steps, e.pool, false))));
  }
  function kv(pairs) {
    return h("div", {class: "kv"}, pairs.filter((p) => has(p[1]) && p[1] !== "").map(([k, v]) =>
      [h("span", {class: "k", text: k}), v instanceof Node ? v : h("span", {text: v})]));
  }
  function gradeBlock(e) {
    const g = e.grade;
    if (!g) {
      return note(e.outcome === "invalid" ? "No answer was graded: the plan is invalid."
        : "No grade.");
    }
    return kv([["correct", String(g.correct)],
      ["extracted", has(g.extracted) ? g.extracted : "(nothing found)"],
      ["reason", g.reason], ["answer", e.answer ? clip(e.answer, 400) : null]]);
  }
  function drawDetail() {
    let box = document.getElementById("detail");
    if (!box) { box = h("section", {id: "detail", class: "card"}); main.append(box); }
    if (state.ep === null || !E[state.ep]) {
      box.replaceChildren(note("Select an episode in the list to see it."));
      box.removeAttribute("data-episode");
      box.removeAttribute("data-compare");
      return;
    }
    box.dataset.episode = state.ep;
    if (state.cmp !== null && state.cmp !== state.ep) {
      box.dataset.compare = state.cmp;
      box.replaceChildren(h("div", {class: "compare"}, episodeBlock(state.ep),
        episodeBlock(state.cmp)));
    } else {
      box.removeAttribute("data-compare");
      box.replaceChildren(episodeBlock(state.ep));
    }
  }
  function episodeBlock(n) {
    const e = E[n];
    const pool = e.pool ? h("div", {}, e.pool.map((_, i) => h("div", {}, model(i, e.pool))))
      : "not known";
    const reference = taskField(e, "reference");
    return h("div", {"data-shown": n},
      h("h2", {}, "Episode " + n + ": " + e.task_id + " ", badge(e.outcome)),
      kv([["benchmark", e.benchmark], ["family", e.domain], ["task index", e.task_index],
        ["repeat", e.repeat], ["seed", e.seed],
        ["reward", has(e.reward) ? num(e.reward, 3) : null],
        ["grader", taskField(e, "grader")], ["pool", pool]]),
      h("h3", {text: "Question"}),
      text("question", taskField(e, "question") || "(not available)"),
      h("h3", {text: "Reference"}),
      text("reference", has(reference) ? reference : "(not available)"),
      e.rounds.map((r) => roundBlock(r, e, e.rounds.length > 1)),
      h("h3", {text: "Grade"}), gradeBlock(e),
      e.error ? h("div", {class: "error-box"},
        h("b", {text: "Infrastructure failure (not scored)"}),
        text("error", JSON.stringify(e.error, null, 1))) : null,
      h("h3", {text: "Totals"}),
      kv([["worker calls", e.worker_calls],
        ["tokens in / out", tok(e.prompt_tokens) + " / " + tok(e.completion_tokens)],
        ["cost", money(e.cost_usd)], ["latency", num(e.latency_s, 2) + " s"],
        ["planner tokens", e.planner_tokens ? tok(e.planner_tokens) : null],
        ["planner cost", e.planner_cost_usd ? money(e.planner_cost_usd) : null]]),
      e.notes && e.notes.length
        ? h("ul", {class: "note notes"}, e.notes.map((t) => h("li", {text: t}))) : null);
  }

  // ------------------------------------------------------------------------ start
  window.viewer = {parseMs: parseMs, readyMs: null, lastFilterMs: null, matches: E.length,
    lastExport: null};
  drawRun();
  if (D.mode === "episode") {
    state.ep = E.length ? 0 : null;
    drawDetail();
  } else {
    readHash();
    drawSummary();
    drawListSection();
    applyFilters();
    drawList();
    drawDetail();
    window.addEventListener("hashchange", () => {
      readHash();
      for (const [key] of FILTERS) document.getElementById("filter-" + key).value = state[key];
      document.getElementById("search").value = state.q;
      document.getElementById("sort").value = state.sort;
      applyFilters();
      drawList();
      drawDetail();
    });
  }
  window.viewer.readyMs = performance.now() - t0;
  document.documentElement.dataset.viewerReady = "1";
})();
