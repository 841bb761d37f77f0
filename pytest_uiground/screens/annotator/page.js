// The annotator's page (python -m pytest_uiground annotate): every user string is written with
// textContent (never innerHTML), every change is sent to the server as small operations made on
// the revision the page holds, and undo is the inverse operation, saved like any other.
// Typing is never a command by accident: a letter goes into the selected sample's instruction (or
// nowhere); commands are Alt+key, Enter, Esc, Del and the arrows, keys no sentence types.
"use strict";

const TOKEN = document.querySelector('meta[name="uiground-token"]').content;
const $ = (id) => document.getElementById(id);
const TASKS = ["point", "detect", "refusal"];
const HANDLES = ["nw", "n", "ne", "e", "se", "s", "sw", "w"];

const S = {
  state: null,        // the server's state: revision, images, samples [{index, data}], entries
  cur: 0,             // index of the screen shown
  sel: null,          // {kind: "sample", index} | {kind: "proposal", pid}
  props: {},          // image index -> {items, error} | "loading"
  zoom: 1, fit: true,
  undo: [], redo: [],
  queue: Promise.resolve(), inflight: 0, saves: 0,
  conflict: null,     // {label, ops} while a change waits for the person's decision
  clickMode: false,
  drag: null,
  typing: {timer: null, session: 0},
  hints: {},          // "image|x1,y1,x2,y2" -> proposal text (for the instruction hint)
  early: null,        // {text, enter}: keys typed while a new sample is being saved
};

// -- server ----------------------------------------------------------------------------------------
async function api(path, body, keepalive) {
  const opts = {headers: {"X-Token": TOKEN}};
  if (body !== undefined) {
    opts.method = "POST";
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
    if (keepalive) opts.keepalive = true;
  }
  const response = await fetch(path, opts);
  let doc;
  try { doc = await response.json(); } catch (e) { doc = null; }
  return {status: response.status, doc};
}

function setStatus(text, kind) {
  const el = $("status");
  el.textContent = text;
  el.className = kind || "";
}

// commit(label, build, opts): build() makes {ops, inverse} from the state when the change is sent
// (changes are sent one after another, each on the revision the previous one produced).
function commit(label, build, opts = {}) {
  S.queue = S.queue.then(() => send(label, build, opts)).catch((err) => {
    setStatus("not saved: " + err, "bad");
    return false;
  });
  return S.queue;
}

async function send(label, build, opts) {
  if (S.conflict) { setStatus("not saved: resolve the conflict above first", "bad"); return false; }
  const change = build();
  if (!change) return false;
  S.inflight++;
  S.saves++;
  setStatus("saving…", "busy");
  let reply;
  try {
    reply = await api("api/change", {base: S.state.revision, ops: change.ops}, opts.keepalive);
  } finally {
    S.inflight--;
  }
  if (reply.status === 200) {
    S.state = reply.doc.state;
    // The server gives a new sample its id: the inserted samples, as written, replace what was sent (the
    // undo entry's delete names the same objects, so it removes exactly the sample the server wrote).
    const created = reply.doc.created || [];
    change.ops.filter((op) => op.op === "insert").forEach((op, k) => {
      if (!created[k]) return;
      for (const key of Object.keys(op.sample)) delete op.sample[key];  // the server's key order, as in its state
      Object.assign(op.sample, created[k]);
    });
    record(label, change, opts);
    setStatus("saved", "");
    render();
    return true;
  }
  if (reply.status === 409) {
    S.conflict = {label, ops: change.ops, entries: S.state.entries};
    showConflict();
    return false;
  }
  setStatus("not saved: " + ((reply.doc && reply.doc.error) || ("HTTP " + reply.status)), "bad");
  render();
  return false;
}

function record(label, change, opts) {
  if (opts.history === "none") return;
  if (opts.history === "undo") { S.redo.push({label, ops: change.inverse, inverse: change.ops}); return; }
  const entry = {label, ops: change.ops, inverse: change.inverse, merge: change.merge, time: Date.now()};
  if (opts.history === "redo") { S.undo.push(entry); return; }
  const top = S.undo[S.undo.length - 1];
  if (change.merge && top && top.merge && top.merge.key === change.merge.key
      && (change.merge.session || Date.now() - top.time < 1500)) {
    // one undo step for one typing session (or one burst of nudges): back to the value before it
    const first = top.merge.first;
    top.ops = [replaceOp(change.merge.index, first, change.merge.now)];
    top.inverse = [replaceOp(change.merge.index, change.merge.now, first)];
    top.time = entry.time;
  } else {
    S.undo.push(entry);
  }
  S.redo = [];
}

function undo() { historyStep(S.undo, "undo"); }
function redo() { historyStep(S.redo, "redo"); }

async function historyStep(stack, kind) {
  await flushInstruction();
  await S.queue;
  const entry = stack.pop();
  if (!entry) { setStatus("nothing to " + kind, ""); return; }
  const change = kind === "undo" ? {ops: entry.inverse, inverse: entry.ops} : {ops: entry.ops, inverse: entry.inverse};
  const ok = await commit(entry.label, () => change, {history: kind});
  if (!ok) { stack.push(entry); return; }
  // Keep the changed sample selected (its instruction can be typed again at once).
  const touched = change.ops.find((op) => op.op === "replace" || op.op === "insert");
  S.sel = touched && sampleAt(touched.index) ? {kind: "sample", index: touched.index} : null;
  setStatus((kind === "undo" ? "undone: " : "redone: ") + entry.label, "");
  render();
}

async function loadState() {
  const reply = await api("api/state");
  if (reply.status !== 200) { setStatus("cannot load the state (HTTP " + reply.status + ")", "bad"); return false; }
  S.state = reply.doc;
  return true;
}

// -- conflicts -------------------------------------------------------------------------------------
function showConflict() {
  $("banner-text").textContent = "Not saved: " + S.state.file_name + " changed in another tab or program since this "
    + "page loaded it. Your change: “" + S.conflict.label + "”.";
  $("banner-reapply").hidden = false;
  $("banner-reload").textContent = "Reload without it";
  $("banner").hidden = false;
  setStatus("conflict: not saved", "bad");
}

function same(a, b) { return JSON.stringify(a) === JSON.stringify(b); }

// The change made on the old revision, moved onto the new one: appended lines are appended again,
// a replaced or deleted line is found by its content; null when it was changed there too.
function rebase(ops, oldEntries, state) {
  const out = [];
  for (const op of ops) {
    if (op.op === "insert") {
      const sample = {...op.sample};
      if (state.samples.some((s) => s.data.id === sample.id)) {
        delete sample.id;  // the other tab's sample has this id now: the server gives this one another
      }
      out.push({...op, sample, index: op.index >= oldEntries ? state.entries : op.index});
    } else if (op.op === "replace" || op.op === "delete") {
      const hit = state.samples.find((s) => same(s.data, op.old));
      if (!hit) return null;
      out.push({...op, index: hit.index});
    } else {
      out.push(op);
    }
  }
  return out;
}

async function resolveConflict(reapply) {
  const pending = S.conflict;
  S.conflict = null;
  $("banner").hidden = true;
  await loadState();
  S.undo = []; S.redo = []; S.sel = null;
  if (reapply && pending) {
    const ops = rebase(pending.ops, pending.entries, S.state);
    if (!ops) {
      render();
      setStatus("could not re-apply “" + pending.label + "”: that sample was changed there too", "bad");
      return;
    }
    await commit(pending.label, () => ({ops, inverse: []}), {history: "none"});
    S.undo = [];
  }
  render();
  if (!reapply) setStatus(pending ? "reloaded; “" + pending.label + "” was not applied" : "reloaded", "");
}

// A change made elsewhere shows before the next edit is refused.
async function poll() {
  if (!S.state || S.inflight || S.conflict) return;
  const saves = S.saves;
  const reply = await api("api/revision");
  // A save of this page's that started meanwhile moved the revision itself: no news from elsewhere.
  if (reply.status === 200 && reply.doc.revision !== S.state.revision && !S.inflight && !S.conflict
      && S.saves === saves) {
    $("banner-text").textContent = S.state.file_name + " changed in another tab or program. Reload to see it "
      + "(your changes so far are saved).";
    $("banner-reapply").hidden = true;
    $("banner-reload").textContent = "Reload";
    $("banner").hidden = false;
  }
}

// -- the model -------------------------------------------------------------------------------------
const image = () => S.state.images[S.cur];
const samplesOn = (name) => S.state.samples.filter((s) => s.data.image === name);
const sampleAt = (index) => S.state.samples.find((s) => s.index === index);
const needsInstruction = (d) => (d.task || "point") !== "detect" && !String(d.instruction || "").trim();

function boxOf(d) {
  if (Array.isArray(d.bbox) && d.bbox.length === 4) return d.bbox.map(Number);
  if (Array.isArray(d.polygon) && d.polygon.length >= 6) {
    const xs = d.polygon.filter((_, i) => i % 2 === 0), ys = d.polygon.filter((_, i) => i % 2 === 1);
    return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
  }
  return null;
}

// What a proposal is called on the page: the server's title ("icon", "icon: CAPTION" for an icon
// or OCR junk such as "□"), else the text it read.
const titleOf = (p) => p.title || p.text;

function proposalsOf(i) {
  const p = S.props[i];
  return p && p !== "loading" && p.items ? p.items : [];
}

function pendingProposals(i) {
  const img = S.state.images[i];
  const boxes = new Set(samplesOn(img.name).map((s) => String(boxOf(s.data))));
  return proposalsOf(i).filter((p) => !img.marks[p.pid] && !boxes.has(String(p.box)));
}

function replaceOp(index, old, sample) { return {op: "replace", index, old, sample}; }

function reviewOp(name, pid, status) { return {op: "review", image: name, pid, status}; }

// -- actions ---------------------------------------------------------------------------------------
async function addSample(box, elementType, proposal) {
  const name = image().name;
  let created = null;
  // Keys typed before the new sample's editor opens (the save takes a round trip) are kept for it.
  S.early = {text: "", enter: false};
  const label = proposal ? "accept “" + titleOf(proposal) + "”" : "draw a box";
  const ok = await commit(label, () => {
    // No id: the server gives it (one rule for the page, the importers and the loader), named in its answer.
    created = {image: name, instruction: "", bbox: box, element_type: elementType, task: "point"};
    const index = S.state.entries;
    const ops = [{op: "insert", index, sample: created}];
    const inverse = [{op: "delete", index, old: created}];
    if (proposal) {
      ops.push(reviewOp(name, proposal.pid, "accepted"));
      inverse.unshift(reviewOp(name, proposal.pid, null));
    }
    return {ops, inverse};
  });
  const early = S.early;
  S.early = null;
  if (!ok) return;
  const hit = S.state.samples.find((s) => s.data.id === created.id);
  if (hit) select({kind: "sample", index: hit.index});
  focusInstruction();
  if (early.text) {
    $("instruction").value = early.text;
    if (!early.enter) flushSoon();
  }
  if (early.enter) {
    flushInstruction();
    $("instruction").blur();
    go(1, true);
  }
}

function flushSoon() {
  clearTimeout(S.typing.timer);
  S.typing.timer = setTimeout(flushInstruction, 600);
}

async function accept() {
  const p = selectedProposal();
  if (!p) return;
  const type = p.element_type || "text";
  S.hints[image().name + "|" + p.box] = titleOf(p);
  await addSample(p.box.slice(), type, p);
}

async function reject() {
  const p = selectedProposal();
  if (!p) return;
  const name = image().name;
  const next = nextItem(1, false);
  const ok = await commit("reject “" + titleOf(p) + "”", () => ({
    ops: [reviewOp(name, p.pid, "rejected")], inverse: [reviewOp(name, p.pid, null)]}));
  if (ok) select(next && !(next.kind === "proposal" && next.pid === p.pid) ? next : null);
}

async function deleteSample() {
  const s = selectedSample();
  if (!s) return;
  const next = nextItem(1, false);
  const ok = await commit("delete " + (s.data.id || "a sample"), () => {
    const cur = sampleAt(s.index);
    return cur ? {ops: [{op: "delete", index: s.index, old: cur.data}],
                  inverse: [{op: "insert", index: s.index, sample: cur.data}]} : null;
  });
  if (ok) select(next && next.kind === "proposal" ? next : null);
}

// Change the selected sample's fields: fn(copy) edits a copy of its data.
function updateSample(label, index, fn, merge) {
  return commit(label, () => {
    const cur = sampleAt(index);
    if (!cur) return null;
    const next = JSON.parse(JSON.stringify(cur.data));
    fn(next);
    if (same(next, cur.data)) return null;
    const change = {ops: [replaceOp(index, cur.data, next)], inverse: [replaceOp(index, next, cur.data)]};
    if (merge) change.merge = {key: merge.key, session: merge.session, index, first: cur.data, now: next};
    return change;
  });
}

function flushInstruction() {
  clearTimeout(S.typing.timer);
  S.typing.timer = null;
  const s = selectedSample();
  const value = $("instruction").value;
  if (!s || $("sample-editor").hidden || value === String(s.data.instruction || "")) return S.queue;
  return updateSample("instruction of " + (s.data.id || "a sample"), s.index, (d) => { d.instruction = value; },
                      {key: "instruction:" + s.index + ":" + S.typing.session, session: true});
}

function focusInstruction() {
  if ($("sample-editor").hidden) return;
  const box = $("instruction");
  box.focus();
  box.setSelectionRange(box.value.length, box.value.length);
}

function toggleDone() {
  const img = image();
  const value = !img.done;
  commit((value ? "mark " : "unmark ") + img.name + " done", () => ({
    ops: [{op: "done", image: img.name, done: value}], inverse: [{op: "done", image: img.name, done: !value}]}));
}

function cycleTask() {
  const s = selectedSample();
  if (!s) return;
  const next = TASKS[(TASKS.indexOf(s.data.task || "point") + 1) % TASKS.length];
  updateSample("task " + next, s.index, (d) => { d.task = next; });
}

function nudge(dx, dy) {
  const s = selectedSample();
  if (!s || !Array.isArray(s.data.bbox)) return;
  const img = image();
  const [x1, y1, x2, y2] = s.data.bbox;
  const mx = Math.max(-x1, Math.min(img.width - x2, dx)), my = Math.max(-y1, Math.min(img.height - y2, dy));
  if (!mx && !my) return;
  updateSample("move " + (s.data.id || "a sample"), s.index, (d) => { d.bbox = [x1 + mx, y1 + my, x2 + mx, y2 + my]; },
               {key: "nudge:" + s.index, session: false});
}

// -- selection and navigation ----------------------------------------------------------------------
function selectedSample() { return S.sel && S.sel.kind === "sample" ? sampleAt(S.sel.index) : null; }
function selectedProposal() {
  return S.sel && S.sel.kind === "proposal" ? proposalsOf(S.cur).find((p) => p.pid === S.sel.pid) : null;
}

function select(sel) {
  const focused = document.activeElement;
  if (focused && focused !== document.body && $("panel").contains(focused)) focused.blur();  // saves it first
  S.sel = sel;
  S.clickMode = false;
  render();
}

// The screen's items in reading order: samples (only those without an instruction when filtering)
// and the proposals nobody has handled yet.
function items() {
  const name = image().name;
  let list = samplesOn(name).filter((s) => !S.filter || needsInstruction(s.data))
    .map((s) => ({kind: "sample", index: s.index, box: boxOf(s.data) || [0, 0, 0, 0], todo: needsInstruction(s.data)}));
  if (!S.filter) list = list.concat(pendingProposals(S.cur).map((p) => ({kind: "proposal", pid: p.pid, box: p.box, todo: true})));
  return readingOrder(list);
}

// Rows top to bottom (boxes whose vertical centres lie within half a box height share a row, so a
// toolbar's labels of slightly different heights read left to right), each row left to right.
function readingOrder(list) {
  const cy = (it) => (it.box[1] + it.box[3]) / 2;
  const sorted = list.slice().sort((a, b) => cy(a) - cy(b));
  const rows = [];
  for (const it of sorted) {
    const row = rows[rows.length - 1];
    if (row && cy(it) - row.cy <= Math.max(6, row.h / 2)) row.items.push(it);
    else rows.push({cy: cy(it), h: it.box[3] - it.box[1], items: [it]});
  }
  return rows.flatMap((row) => row.items.sort((a, b) => a.box[0] - b.box[0]));
}

function position(list) {
  if (!S.sel) return -1;
  return list.findIndex((it) => it.kind === S.sel.kind && (it.kind === "sample" ? it.index === S.sel.index : it.pid === S.sel.pid));
}

function nextItem(step, onlyTodo) {
  const list = items();
  let at = position(list);
  for (let n = 0; n < list.length; n++) {
    at += step;
    if (at < 0 || at >= list.length) return null;
    if (!onlyTodo || list[at].todo) return list[at];
  }
  return null;
}

function go(step, onlyTodo) {
  const next = nextItem(step, onlyTodo);
  if (next) { select(next); scrollToSelection(); return; }
  setStatus(step > 0 ? "last item on this screen: Alt+] for the next screen" : "first item on this screen", "");
}

function showImage(i) {
  if (!S.state.images.length) return;
  i = Math.max(0, Math.min(S.state.images.length - 1, i));
  flushInstruction();
  S.cur = i;
  S.sel = null;
  S.fit = true;
  const img = image();
  $("shot").src = img.error ? "" : "api/image/" + i + "?token=" + encodeURIComponent(TOKEN);
  loadProposals(i);
  render();
  $("stage").scrollTo(0, 0);
}

async function loadProposals(i) {
  if (S.props[i] || !S.state.detector) return;
  S.props[i] = "loading";
  render();
  const reply = await api("api/proposals/" + i);
  S.props[i] = reply.status === 200 ? reply.doc : {items: [], error: "HTTP " + reply.status};
  for (const p of S.props[i].items || []) S.hints[S.state.images[i].name + "|" + p.box] = titleOf(p);
  render();
  if (i + 1 < S.state.images.length) setTimeout(() => loadProposals(i + 1), 50);
}

// -- zoom ------------------------------------------------------------------------------------------
function fitZoom() {
  const img = image(), stage = $("stage");
  if (!img || !img.width) return 1;
  return Math.min((stage.clientWidth - 8) / img.width, (stage.clientHeight - 8) / img.height);
}

function setZoom(z, anchor) {
  const stage = $("stage");
  const old = S.zoom;
  S.fit = false;
  S.zoom = Math.max(0.05, Math.min(16, z));
  const ax = anchor ? anchor[0] : stage.clientWidth / 2, ay = anchor ? anchor[1] : stage.clientHeight / 2;
  const ix = (stage.scrollLeft + ax) / old, iy = (stage.scrollTop + ay) / old;
  render();
  stage.scrollLeft = ix * S.zoom - ax;
  stage.scrollTop = iy * S.zoom - ay;
}

function zoomToSelection() {
  const box = selectionBox();
  if (!box) return;
  const stage = $("stage");
  const w = Math.max(box[2] - box[0], 4), h = Math.max(box[3] - box[1], 4);
  S.fit = false;
  S.zoom = Math.max(0.05, Math.min(16, Math.min(stage.clientWidth / (w * 4), stage.clientHeight / (h * 4))));
  render();
  scrollToSelection();
}

function scrollToSelection() {
  const box = selectionBox();
  if (!box) return;
  const stage = $("stage"), z = S.zoom;
  const cx = (box[0] + box[2]) / 2 * z, cy = (box[1] + box[3]) / 2 * z;
  const canvas = $("canvas");
  const left = canvas.offsetLeft + cx, top = canvas.offsetTop + cy;
  if (left < stage.scrollLeft + 40 || left > stage.scrollLeft + stage.clientWidth - 40
      || top < stage.scrollTop + 40 || top > stage.scrollTop + stage.clientHeight - 40) {
    stage.scrollLeft = left - stage.clientWidth / 2;
    stage.scrollTop = top - stage.clientHeight / 2;
  }
}

function selectionBox() {
  const s = selectedSample();
  if (s) return boxOf(s.data);
  const p = selectedProposal();
  return p ? p.box : null;
}

// -- rendering -------------------------------------------------------------------------------------
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function render() {
  if (!S.state) return;
  renderBar();
  renderImages();
  renderStage();
  renderPanel();
}

function renderBar() {
  const st = S.state;
  $("file").textContent = st.file;
  $("file").title = st.file;
  const todo = st.samples.filter((s) => needsInstruction(s.data)).length;
  const done = st.images.filter((i) => i.done).length;
  $("progress").textContent = done + "/" + st.images.length + " screens done · " + st.samples.length + " samples · "
    + todo + " without instruction";
  $("undo").disabled = !S.undo.length;
  $("redo").disabled = !S.redo.length;
  $("undo").title = S.undo.length ? "Undo " + S.undo[S.undo.length - 1].label + " (Ctrl+Z)" : "Undo (Ctrl+Z)";
  $("redo").title = S.redo.length ? "Redo " + S.redo[S.redo.length - 1].label + " (Ctrl+Shift+Z)" : "Redo";
}

function renderImages() {
  const list = $("image-list");
  list.replaceChildren();
  S.state.images.forEach((img, i) => {
    const samples = samplesOn(img.name);
    const todo = samples.filter((s) => needsInstruction(s.data)).length;
    if (S.filter && !todo && i !== S.cur) return;
    const li = el("li", (i === S.cur ? "current " : "") + (img.done ? "done" : ""));
    li.dataset.index = String(i);
    const label = el("span", "name");
    for (const part of img.name.split(/(?<=[_\-./])/)) label.append(part, document.createElement("wbr"));
    li.append(label);
    const stats = el("span", "stats");
    if (img.error) {
      stats.textContent = img.error;
    } else {
      stats.append(samples.length + " sample" + (samples.length === 1 ? "" : "s"));
      if (todo) { stats.append(" · "); stats.append(el("span", "todo", todo + " no instruction")); }
      const p = S.props[i];
      if (p === "loading") stats.append(" · finding proposals…");
      else if (p && p.items) {
        const left = pendingProposals(i).length;
        stats.append(" · " + left + "/" + p.items.length + " proposals left");
      }
    }
    li.append(stats);
    const total = S.props[i] && S.props[i].items ? S.props[i].items.length : 0;
    const handled = total ? total - pendingProposals(i).length : 0;
    const bar = el("span", "bar");
    const fill = el("span");
    fill.style.width = (img.done ? 100 : total ? Math.round(100 * handled / total) : 0) + "%";
    bar.append(fill);
    li.append(bar);
    li.addEventListener("click", () => showImage(i));
    list.append(li);
  });
}

function place(node, box) {
  const z = S.zoom;
  node.style.left = box[0] * z + "px";
  node.style.top = box[1] * z + "px";
  node.style.width = Math.max(1, (box[2] - box[0]) * z) + "px";
  node.style.height = Math.max(1, (box[3] - box[1]) * z) + "px";
}

function renderStage() {
  const img = image();
  const note = $("stage-note");
  if (!img) return;
  if (S.fit) S.zoom = fitZoom();
  const z = S.zoom;
  $("shot").style.width = img.width * z + "px";
  $("shot").style.height = img.height * z + "px";
  $("canvas").style.width = img.width * z + "px";
  $("canvas").classList.toggle("pixelated", z >= 3);
  $("zoom-level").textContent = Math.round(z * 100) + "%";
  const overlay = $("overlay");
  overlay.replaceChildren();
  overlay.classList.toggle("clicking", S.clickMode);
  const p = S.props[S.cur];
  const notes = [];
  if (img.error) notes.push(img.error);
  if (p === "loading") notes.push("finding proposals (" + S.state.detector + ")…");
  else if (p && p.error) notes.push("proposals: " + p.error);
  if (S.clickMode) notes.push("click on the screenshot to mark the click point (Esc: cancel)");
  note.textContent = notes.join(" · ");
  note.hidden = !notes.length;

  for (const prop of pendingProposals(S.cur)) {
    const sel = S.sel && S.sel.kind === "proposal" && S.sel.pid === prop.pid;
    const node = el("div", "box prop" + (sel ? " sel" : ""));
    node.dataset.pid = prop.pid;
    node.title = titleOf(prop);
    place(node, prop.box);
    overlay.append(node);
  }
  for (const s of samplesOn(img.name)) {
    const box = boxOf(s.data);
    if (!box) continue;
    const sel = S.sel && S.sel.kind === "sample" && S.sel.index === s.index;
    const poly = !Array.isArray(s.data.bbox);
    const node = el("div", "box sample" + (needsInstruction(s.data) ? " todo" : "") + (sel ? " sel" : "")
      + (poly ? " poly" : ""));
    node.dataset.sample = String(s.index);
    place(node, (S.drag && S.drag.index === s.index && S.drag.box) || box);
    const caption = String(s.data.instruction || "") || (s.data.id || "") + " · no instruction";
    const chrome = sel && !poly ? handleLayout(box) : null;
    if (sel) {  // only the selection's: a dense toolbar stays readable
      const tag = el("span", "tag", caption);
      // Outside the box, past its border, its ring and the handles: a small icon stays visible.
      const below = box[1] * z < 18 + (chrome ? chrome.clear : 5);
      tag.style[below ? "top" : "bottom"] = "calc(100% + " + (chrome ? chrome.clear : 5) + "px)";
      tag.style[below ? "bottom" : "top"] = "auto";
      node.append(tag);
    } else {
      node.title = caption;
    }
    if (chrome) {
      for (const h of chrome.handles) {
        const handle = el("span", "handle" + (chrome.outside ? " outside" : ""));
        handle.dataset.handle = h.name;
        handle.style.width = handle.style.height = chrome.size + "px";
        handle.style.left = h.left;
        handle.style.top = h.top;
        node.append(handle);
      }
    }
    overlay.append(node);
    if (Array.isArray(s.data.click) && s.data.click.length === 2) {
      const mark = el("span", "clickmark");
      mark.style.left = s.data.click[0] * z + "px";
      mark.style.top = s.data.click[1] * z + "px";
      overlay.append(mark);
    }
  }
  if (S.drag && S.drag.mode === "draw" && S.drag.box) {
    const node = el("div", "box draft");
    place(node, S.drag.box);
    overlay.append(node);
  }
}

// The selected box's resize handles at this zoom. A box big on screen gets eight handles on its
// border; a small one (an icon at 44 %) gets four corner handles outside it, sized to the box, so
// neither they nor the label hide the pixels being checked. Positions are relative to the box's
// padding edge (2 px inside its border).
function handleLayout(box) {
  const z = S.zoom, w = (box[2] - box[0]) * z, h = (box[3] - box[1]) * z, small = Math.min(w, h) < 32;
  const size = Math.round(Math.max(5, Math.min(10, Math.min(w, h) / (small ? 2.5 : 4))));
  const at = (name) => {
    if (!small) {
      const left = (name.includes("w") ? 0 : name.includes("e") ? 100 : 50) + "%";
      const top = (name.includes("n") ? 0 : name.includes("s") ? 100 : 50) + "%";
      return {name, left: "calc(" + left + " - " + size / 2 + "px)", top: "calc(" + top + " - " + size / 2 + "px)"};
    }
    const out = 2 + 3;  // past the 2 px border and the 3 px selection ring
    return {name, left: name.includes("w") ? -(out + size) + "px" : "calc(100% + " + out + "px)",
            top: name.includes("n") ? -(out + size) + "px" : "calc(100% + " + out + "px)"};
  };
  const names = small ? ["nw", "ne", "se", "sw"] : HANDLES;
  return {size, outside: small, handles: names.map(at), clear: small ? 2 + 3 + size + 2 : 2 + 3 + size / 2};
}

// Boxes and clicks are shown as the server writes them (format.box_text, the one box text): "box [x1, y1,
// x2, y2] px"; the box field holds the numbers between the brackets.
const inside = (text) => { const m = /\[(.*)\]/.exec(text || ""); return m ? m[1] : ""; };

function renderPanel() {
  const img = image();
  $("screen-name").textContent = img ? img.name + (img.width ? " (" + img.width + "×" + img.height + ")" : "") : "";
  $("done").textContent = img && img.done ? "✓ Screen done" : "Mark screen done";
  $("done").classList.toggle("on", !!(img && img.done));
  const s = selectedSample(), p = selectedProposal();
  $("sample-editor").hidden = !s;
  $("proposal-editor").hidden = !p;
  $("none-editor").hidden = !!(s || p);
  if (p) {
    $("prop-text").textContent = titleOf(p);
    $("prop-box").textContent = p.box_text || "";
  }
  if (s) {
    const d = s.data;
    $("sample-id").textContent = d.id || "(line " + (s.index + 1) + ", no id)";
    const box = $("instruction");
    if (document.activeElement !== box) box.value = String(d.instruction || "");
    box.classList.toggle("empty", needsInstruction(d));
    const b = boxOf(d);
    const read = b ? S.hints[d.image + "|" + b] : undefined;
    $("hint").textContent = read ? "The detector saw “" + read + "”: say what a user would ask for, not only the label."
      : (d.task || "point") === "detect" ? "A detection sample: the click point says where the user clicked." : "";
    const bbox = $("bbox");
    if (document.activeElement !== bbox) bbox.value = inside(s.box_text);
    bbox.disabled = !Array.isArray(d.bbox);
    bbox.title = Array.isArray(d.bbox) ? "" : "a polygon: edit it in the file";
    bbox.classList.remove("bad");
    const et = $("etype");
    if (document.activeElement !== et) et.value = String(d.element_type || "");
    $("task").value = TASKS.includes(d.task) ? d.task : "point";
    $("click-text").textContent = s.click_text ? inside(s.click_text) : "none";
    $("click-clear").hidden = !Array.isArray(d.click);
    $("click-set").textContent = S.clickMode ? "Click on the screenshot…" : "Mark click";
    const known = new Set(["id", "image", "instruction", "instruction_alts", "bbox", "polygon", "element_type",
      "task", "click"]);
    const meta = Object.keys(d).filter((k) => !known.has(k)).map((k) => k + "=" + JSON.stringify(d[k]));
    // other wordings (issue 43) are no metadata: kept as the file has them, asked with --uiground-perturb alt
    const alts = Array.isArray(d.instruction_alts) ? d.instruction_alts.map((a) => JSON.stringify(a)) : [];
    $("meta").textContent = [alts.length ? "other wordings: " + alts.join(", ") : "",
      meta.length ? "metadata: " + meta.join(", ") : ""].filter(Boolean).join("; ");
  }
  renderLoupe();
  renderSampleList();
  $("problems").textContent = (S.state.problems || []).join(" · ");
}

function renderLoupe() {
  const canvas = $("loupe"), ctx = canvas.getContext("2d");
  ctx.fillStyle = "#111827";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  const box = selectionBox(), shot = $("shot");
  if (!box || !shot.complete || !shot.naturalWidth) {
    ctx.fillStyle = "#9ca3af";
    ctx.font = "13px system-ui, sans-serif";
    ctx.fillText("the selection, magnified, shows here", 12, 24);
    return;
  }
  const img = image();
  const w = box[2] - box[0], h = box[3] - box[1];
  const pad = Math.max(w, h) * 0.6 + 6;
  const sx = Math.max(0, box[0] - pad), sy = Math.max(0, box[1] - pad);
  const sw = Math.min(img.width, box[2] + pad) - sx, sh = Math.min(img.height, box[3] + pad) - sy;
  const scale = Math.min(canvas.width / sw, canvas.height / sh, 16);
  const dw = sw * scale, dh = sh * scale, dx = (canvas.width - dw) / 2, dy = (canvas.height - dh) / 2;
  ctx.imageSmoothingEnabled = scale < 2;
  ctx.drawImage(shot, sx, sy, sw, sh, dx, dy, dw, dh);
  ctx.strokeStyle = "#2563eb";
  ctx.lineWidth = 2;
  ctx.strokeRect(dx + (box[0] - sx) * scale, dy + (box[1] - sy) * scale, w * scale, h * scale);
  const s = selectedSample();
  if (s && Array.isArray(s.data.click)) {
    ctx.strokeStyle = "#e11d48";
    ctx.beginPath();
    ctx.arc(dx + (s.data.click[0] - sx) * scale, dy + (s.data.click[1] - sy) * scale, 7, 0, 2 * Math.PI);
    ctx.stroke();
  }
}

function renderSampleList() {
  const list = $("sample-list");
  list.replaceChildren();
  const img = image();
  if (!img) return;
  const samples = readingOrder(samplesOn(img.name).filter((s) => !S.filter || needsInstruction(s.data))
    .map((s) => ({s, box: boxOf(s.data) || [0, 0, 0, 0]}))).map((it) => it.s);
  for (const s of samples) {
    const li = el("li", S.sel && S.sel.kind === "sample" && S.sel.index === s.index ? "sel" : "");
    const text = String(s.data.instruction || "");
    li.append(text ? el("span", "", text) : el("span", "none", "no instruction yet"));
    li.append(" ");
    li.append(el("span", "kind", [s.data.id, s.data.element_type, s.data.task || "point"].filter(Boolean).join(" · ")));
    li.addEventListener("click", () => { select({kind: "sample", index: s.index}); scrollToSelection(); });
    list.append(li);
  }
  if (!samples.length) list.append(el("li", "muted", S.filter ? "every sample here has an instruction" : "no samples yet"));
}

// -- pointer: select, draw, move, resize, click point -----------------------------------------------
function toImage(ev) {
  const r = $("overlay").getBoundingClientRect(), img = image();
  const x = (ev.clientX - r.left) / S.zoom, y = (ev.clientY - r.top) / S.zoom;
  return [Math.max(0, Math.min(img.width, x)), Math.max(0, Math.min(img.height, y))];
}

function dragBox(drag, p) {
  const [x1, y1, x2, y2] = drag.orig, img = image();
  const dx = p[0] - drag.start[0], dy = p[1] - drag.start[1];
  if (drag.mode === "move") {
    const mx = Math.max(-x1, Math.min(img.width - x2, dx)), my = Math.max(-y1, Math.min(img.height - y2, dy));
    return [x1 + mx, y1 + my, x2 + mx, y2 + my].map(Math.round);
  }
  let [a, b, c, d] = [x1, y1, x2, y2];
  const h = drag.handle;
  if (h.includes("w")) a = Math.min(x1 + dx, x2 - 1);
  if (h.includes("e")) c = Math.max(x2 + dx, x1 + 1);
  if (h.includes("n")) b = Math.min(y1 + dy, y2 - 1);
  if (h.includes("s")) d = Math.max(y2 + dy, y1 + 1);
  return [a, b, c, d].map(Math.round);
}

function onPointerDown(ev) {
  if (ev.button !== 0 || !S.state) return;
  flushInstruction();
  const p = toImage(ev), t = ev.target;
  if (S.clickMode) {
    const s = selectedSample();
    S.clickMode = false;
    if (s) updateSample("click point", s.index, (d) => { d.click = p.map(Math.round); });
    render();
    return;
  }
  $("overlay").setPointerCapture(ev.pointerId);
  if (t.dataset.handle) {
    const s = selectedSample();
    S.drag = {mode: "resize", handle: t.dataset.handle, index: s.index, start: p, orig: s.data.bbox.slice()};
  } else if (t.dataset.sample) {
    const index = Number(t.dataset.sample), s = sampleAt(index);
    if (!(S.sel && S.sel.kind === "sample" && S.sel.index === index)) select({kind: "sample", index});
    S.drag = Array.isArray(s.data.bbox) ? {mode: "move", index, start: p, orig: s.data.bbox.slice()} : null;
  } else if (t.dataset.pid) {
    // A click selects the proposal; a drag draws a new box (an icon inside a lumped OCR line).
    S.drag = {mode: "draw", start: p, pid: t.dataset.pid};
  } else {
    S.drag = {mode: "draw", start: p};
  }
  ev.preventDefault();
}

function onPointerMove(ev) {
  const drag = S.drag;
  if (!drag) return;
  const p = toImage(ev);
  if (drag.mode === "draw") {
    drag.box = [Math.min(drag.start[0], p[0]), Math.min(drag.start[1], p[1]),
                Math.max(drag.start[0], p[0]), Math.max(drag.start[1], p[1])].map(Math.round);
  } else {
    drag.box = dragBox(drag, p);
  }
  renderStage();
}

function onPointerUp() {
  const drag = S.drag;
  S.drag = null;
  if (!drag) return;
  if (drag.mode === "draw") {
    const b = drag.box;
    if (b && b[2] - b[0] >= 3 && b[3] - b[1] >= 3) addSample(b, "icon", null);
    else select(drag.pid ? {kind: "proposal", pid: drag.pid} : null);
    return;
  }
  if (drag.box && !same(drag.box, drag.orig)) {
    const box = drag.box;
    updateSample((drag.mode === "move" ? "move " : "resize ") + (sampleAt(drag.index).data.id || "a sample"),
                 drag.index, (d) => { d.bbox = box; });
  }
  renderStage();
}

// -- keyboard --------------------------------------------------------------------------------------
// Commands are Alt+key (the letter as typed, else the key's place: Alt+letter types "å" on a Mac),
// so that no sentence fires one; Enter, Esc, Del and the arrows act without Alt (no sentence types
// them outside a text field). A letter typed with a sample selected and no field focused opens its
// instruction and goes into it; with a proposal or nothing selected it does nothing but say how.
const COMMANDS = {
  "j": () => go(1, false), "n": () => go(1, false), "k": () => go(-1, false), "p": () => go(-1, false),
  "a": () => (selectedProposal() ? accept() : focusInstruction()), "r": () => (selectedProposal() ? reject() : null),
  "i": () => focusInstruction(), "e": () => { if (selectedSample()) $("etype").focus(); },
  "t": () => cycleTask(), "c": () => startClick(), "z": () => zoomToSelection(),
  "d": () => toggleDone(), "f": () => { $("filter").checked = !$("filter").checked; setFilter(); },
  "[": () => showImage(S.cur - 1), "]": () => showImage(S.cur + 1),
  "+": () => setZoom(S.zoom * 1.5), "=": () => setZoom(S.zoom * 1.5), "-": () => setZoom(S.zoom / 1.5),
  "0": () => { S.fit = true; render(); }, "/": () => $("help").showModal(), "?": () => $("help").showModal(),
};
const CODES = {BracketLeft: "[", BracketRight: "]", Equal: "=", Minus: "-", Digit0: "0", Slash: "/", NumpadAdd: "+",
               NumpadSubtract: "-"};

function commandKey(ev) {
  if (/^[a-z]$/i.test(ev.key)) return ev.key.toLowerCase();
  if (/^Key[A-Z]$/.test(ev.code)) return ev.code.slice(3).toLowerCase();
  return CODES[ev.code] || ev.key;
}

// Put typed text into the instruction box as if typed there (the box's own undo keeps it).
function typeInto(box, text) {
  box.focus();
  if (!document.execCommand("insertText", false, text)) {
    box.setRangeText(text, box.selectionStart, box.selectionEnd, "end");
    box.dispatchEvent(new Event("input"));
  }
}

function onKey(ev) {
  // A focused button or checkbox (the last one clicked) is no text field: a sentence's spaces must
  // not press it again ("Mark screen done" toggled by every word); Enter still presses it.
  const t = ev.target, control = t instanceof HTMLButtonElement
    || (t instanceof HTMLInputElement && ["checkbox", "radio", "button", "submit"].includes(t.type));
  const typing = !control && (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement
    || t instanceof HTMLSelectElement);
  const mod = ev.ctrlKey || ev.metaKey, altGr = ev.getModifierState && ev.getModifierState("AltGraph");
  const alt = ev.altKey && !mod && !altGr;
  if ($("help").open) return;
  if (S.early && !alt && (!mod || altGr)) {  // a new sample's editor is about to open
    if (S.early.enter) { ev.preventDefault(); return; }  // typed after Enter: not the instruction's
    if (ev.key.length === 1) S.early.text += ev.key;
    else if (ev.key === "Backspace") S.early.text = S.early.text.slice(0, -1);
    else if (ev.key === "Enter") S.early.enter = true;
    else return;
    ev.preventDefault();
    return;
  }
  if (alt) {
    const action = COMMANDS[commandKey(ev)];
    if (!action) return;
    ev.preventDefault();
    if (typing) t.blur();  // saves what was typed first
    action();
    return;
  }
  if (typing) {  // Ctrl+Z here is the field's own undo of its text, never the saved state's
    if (t.id === "instruction" && ev.key === "Enter" && !ev.shiftKey && !mod) {
      ev.preventDefault();
      flushInstruction();
      t.blur();
      go(1, true);
    } else if (ev.key === "Escape") {
      t.blur();
    } else if (ev.key === "Enter" && t instanceof HTMLInputElement) {
      t.blur();
    }
    return;
  }
  if (mod && !altGr) {
    if (ev.key === "z" || ev.key === "Z") { ev.preventDefault(); if (ev.shiftKey) redo(); else undo(); }
    else if (ev.key === "y") { ev.preventDefault(); redo(); }
    return;
  }
  if (control && ev.key === "Enter") return;  // the button's own press
  const s = selectedSample(), p = selectedProposal(), shift = ev.shiftKey;
  if (ev.key.length === 1 || ev.key === "Backspace") {
    ev.preventDefault();  // never a focused button's press, never a scroll by a sentence's space
    if (s && !$("sample-editor").hidden) {  // the first key opens the instruction and is its first letter
      const box = $("instruction");
      box.focus();
      box.setSelectionRange(box.value.length, box.value.length);
      if (ev.key === "Backspace") document.execCommand("delete");
      else typeInto(box, ev.key);
    } else if (ev.key.trim()) {
      setStatus(p ? "typed text is never a command: Enter accepts “" + titleOf(p) + "”, then type its instruction"
        : "nothing selected: click an item or press Alt+J, then type its instruction", "");
    }
    return;
  }
  const keys = {
    "Enter": () => (p ? accept() : focusInstruction()),
    "Delete": () => (p ? reject() : deleteSample()),
    "Escape": () => { S.clickMode = false; select(null); },
    "F1": () => $("help").showModal(),
    "ArrowLeft": () => nudge(shift ? -10 : -1, 0), "ArrowRight": () => nudge(shift ? 10 : 1, 0),
    "ArrowUp": () => nudge(0, shift ? -10 : -1), "ArrowDown": () => nudge(0, shift ? 10 : 1),
  };
  const action = keys[ev.key];
  if (!action) return;
  if (ev.key.startsWith("Arrow") && !s) return;  // let the screenshot scroll
  ev.preventDefault();
  action();
}

function startClick() {
  if (!selectedSample()) return;
  S.clickMode = !S.clickMode;
  render();
}

function setFilter() {
  S.filter = $("filter").checked;
  if (S.filter && !samplesOn(image().name).some((s) => needsInstruction(s.data))) {
    const i = S.state.images.findIndex((img) => samplesOn(img.name).some((s) => needsInstruction(s.data)));
    if (i >= 0) { showImage(i); return; }
  }
  S.sel = null;
  render();
}

// -- wiring ----------------------------------------------------------------------------------------
function parseBox(text) {
  const nums = text.replace(/[[\]]/g, " ").split(/[\s,]+/).filter(Boolean).map(Number);
  return nums.length === 4 && nums.every(Number.isFinite) ? nums : null;
}

function wire() {
  const overlay = $("overlay");
  overlay.addEventListener("pointerdown", onPointerDown);
  overlay.addEventListener("pointermove", onPointerMove);
  overlay.addEventListener("pointerup", onPointerUp);
  overlay.addEventListener("pointercancel", () => { S.drag = null; renderStage(); });
  $("shot").addEventListener("load", render);
  $("stage").addEventListener("wheel", (ev) => {
    if (!ev.ctrlKey) return;
    ev.preventDefault();
    const r = $("stage").getBoundingClientRect();
    setZoom(S.zoom * (ev.deltaY < 0 ? 1.2 : 1 / 1.2), [ev.clientX - r.left, ev.clientY - r.top]);
  }, {passive: false});
  window.addEventListener("resize", () => { if (S.fit) render(); });
  document.addEventListener("keydown", onKey);
  // A button clicked with the mouse gives the focus back: the keys typed next are the page's
  // (Enter accepts, letters go into the instruction), not that button's again.
  document.addEventListener("click", (ev) => {
    const button = ev.target instanceof Element ? ev.target.closest("button") : null;
    if (button && ev.detail > 0) button.blur();
  });
  $("undo").addEventListener("click", undo);
  $("redo").addEventListener("click", redo);
  $("help-open").addEventListener("click", () => $("help").showModal());
  $("help-close").addEventListener("click", () => $("help").close());
  $("banner-reapply").addEventListener("click", () => resolveConflict(true));
  $("banner-reload").addEventListener("click", () => resolveConflict(false));
  $("filter").addEventListener("change", setFilter);
  $("zoom-in").addEventListener("click", () => setZoom(S.zoom * 1.5));
  $("zoom-out").addEventListener("click", () => setZoom(S.zoom / 1.5));
  $("zoom-fit").addEventListener("click", () => { S.fit = true; render(); });
  $("zoom-sel").addEventListener("click", zoomToSelection);
  $("done").addEventListener("click", toggleDone);
  $("accept").addEventListener("click", accept);
  $("reject").addEventListener("click", reject);
  $("skip").addEventListener("click", () => go(1, false));
  $("delete").addEventListener("click", deleteSample);
  $("click-set").addEventListener("click", startClick);
  $("click-clear").addEventListener("click", () => {
    const s = selectedSample();
    if (s) updateSample("clear click point", s.index, (d) => { delete d.click; });
  });
  const instruction = $("instruction");
  instruction.addEventListener("focus", () => { S.typing.session++; });
  instruction.addEventListener("input", flushSoon);
  instruction.addEventListener("blur", () => flushInstruction());
  $("etype").addEventListener("change", () => {
    const s = selectedSample(), value = $("etype").value.trim();
    if (s) updateSample("element type " + value, s.index, (d) => { if (value) d.element_type = value; else delete d.element_type; });
  });
  $("task").addEventListener("change", () => {
    const s = selectedSample(), value = $("task").value;
    if (s) updateSample("task " + value, s.index, (d) => { d.task = value; });
  });
  $("bbox").addEventListener("change", () => {
    const s = selectedSample(), box = parseBox($("bbox").value), img = image();
    const ok = box && box[0] < box[2] && box[1] < box[3] && box[0] >= 0 && box[1] >= 0
      && box[2] <= img.width && box[3] <= img.height;
    if (!s) return;
    if (!ok) {
      $("bbox").classList.add("bad");
      setStatus("box [x1, y1, x2, y2] px: four numbers with x1 < x2, y1 < y2 inside the " + img.width + "×"
        + img.height + " screen", "bad");
      return;
    }
    updateSample("box of " + (s.data.id || "a sample"), s.index, (d) => { d.bbox = box; });
  });
  // A closed tab loses nothing: the instruction being typed is sent as the page goes away.
  window.addEventListener("pagehide", () => {
    const s = selectedSample();
    if (s && $("instruction").value !== String(s.data.instruction || "")) {
      clearTimeout(S.typing.timer);
      const next = {...s.data, instruction: $("instruction").value};
      api("api/change", {base: S.state.revision, ops: [replaceOp(s.index, s.data, next)]}, true);
    }
  });
  setInterval(poll, 4000);
}

async function start() {
  wire();
  if (!(await loadState())) return;
  setStatus(S.state.samples.length + " samples loaded", "");
  const first = S.state.images.findIndex((i) => !i.done && !i.error);
  showImage(first >= 0 ? first : 0);
}

start();
