// The sample browser of report.html (report/browse.py writes its table, controls and JSON block):
// filters, search, the detail view and the zoom. It fetches nothing, and inserts every value with
// textContent or as an SVG attribute, never as markup: raw model output is untrusted.
(function () {
  "use strict";
  var node = document.getElementById("uig-data");
  if (!node) return;
  var data = JSON.parse(node.textContent);
  var rows = Array.prototype.slice.call(document.querySelectorAll("#samples tbody tr"));
  var detail = document.getElementById("detail");
  var SVG = "http://www.w3.org/2000/svg";
  var OK = {"pass": 1, "fixed": 1, "new": 1, "right": 1};
  var current = -1;

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }
  function fmt(v) {
    if (v === null || v === undefined) return "-";
    if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toFixed(3).replace(/0+$/, "");
    if (typeof v === "object") return JSON.stringify(v);
    return String(v);
  }
  function haystack(s) {
    return [s.id, s.instruction || "", s.raw || "", s.outcome, JSON.stringify(s.meta)].join(" ").toLowerCase();
  }
  var texts = data.samples.map(haystack);

  function applyFilters() {
    var outcome = document.getElementById("f-outcome").value;
    var q = document.getElementById("f-text").value.trim().toLowerCase();
    var slices = Array.prototype.slice.call(document.querySelectorAll(".f-slice"))
      .filter(function (s) { return s.value !== ""; });
    var shown = 0;
    rows.forEach(function (row) {
      var i = +row.getAttribute("data-i"), s = data.samples[i];
      var ok = (!outcome || (outcome === "!ok" ? !OK[s.outcome] : s.outcome === outcome))
        && (!q || texts[i].indexOf(q) >= 0)
        && slices.every(function (f) { return s.meta[f.getAttribute("data-key")] === f.value; });
      row.hidden = !ok;
      if (ok) shown++;
    });
    document.getElementById("f-count").textContent = shown + " of " + rows.length + " samples shown";
  }

  function field(dl, name, value) {
    if (value === null || value === undefined || value === "") return;
    dl.appendChild(el("dt", {}, name));
    dl.appendChild(el("dd", {}, fmt(value)));
  }

  function overlay(s, scr) {
    var w = scr.w, h = scr.h;
    var o = svg("svg", {viewBox: "0 0 " + w + " " + h, preserveAspectRatio: "none", "class": "marks"});
    function rect(b, cls) {
      o.appendChild(svg("rect", {x: b[0] * w, y: b[1] * h, width: Math.max(1, (b[2] - b[0]) * w),
                                 height: Math.max(1, (b[3] - b[1]) * h), "class": cls}));
    }
    if (s.rect) rect(s.rect, "m-crop");
    if (s.truth && s.truth.box) rect(s.truth.box, "m-truth");
    function answer(p, cls) {  // an answer: its box and point (the baseline answer, purple, drawn first)
      if (p.box) rect([Math.min(p.box[0], p.box[2]), Math.min(p.box[1], p.box[3]),
                       Math.max(p.box[0], p.box[2]), Math.max(p.box[1], p.box[3])], cls);
      if (p.point) {
        var x = Math.min(Math.max(p.point[0], 0), 1) * w, y = Math.min(Math.max(p.point[1], 0), 1) * h;
        var r = Math.max(6, w / 90);
        o.appendChild(svg("circle", {cx: x, cy: y, r: r, "class": cls}));
        o.appendChild(svg("path", {d: "M" + (x - 2 * r) + " " + y + "H" + (x + 2 * r) + "M" + x + " " + (y - 2 * r)
                                       + "V" + (y + 2 * r), "class": cls}));
      }
    }
    if (s.before) answer(s.before, "m-before");
    answer(s.pred, "m-pred");
    if (s.click) o.appendChild(svg("circle", {cx: s.click[0] * w, cy: s.click[1] * h, r: Math.max(4, w / 160),
                                              "class": "m-click"}));
    return o;
  }

  // A sample the report did not draw: its crop is the screenshot itself, seen through an SVG
  // window on the dashed region, with the same marks on top (no picture made when writing).
  function zoomed(s, scr) {
    var o = overlay(s, scr), r = s.rect;
    o.setAttribute("viewBox", [r[0] * scr.w, r[1] * scr.h, Math.max(1, (r[2] - r[0]) * scr.w),
                               Math.max(1, (r[3] - r[1]) * scr.h)].join(" "));
    o.setAttribute("preserveAspectRatio", "xMidYMid meet");
    o.setAttribute("class", "marks crop");
    o.insertBefore(svg("image", {href: scr.src, x: 0, y: 0, width: scr.w, height: scr.h,
                                 preserveAspectRatio: "none"}), o.firstChild);
    return o;
  }

  // A sample's zoomed crop: the one drawn when the report was written (its row's thumbnail), else the
  // page's own window on its screenshot, else the reason there is none.
  function cropOf(i) {
    var t = data.samples[i], thumb = document.querySelector("#row-" + i + " img.thumb");
    if (thumb) return el("img", {src: thumb.getAttribute("src"), alt: "zoomed crop of " + t.id, "class": "crop"});
    if (t.screen !== undefined && t.rect) return zoomed(t, data.screens[t.screen]);
    return el("p", {"class": "note"}, t.img_note || "no picture");
  }

  // A perturbed sample beside its original: each crop with its own target and answer, drawn in its own
  // image's coordinates (a resized or photographed screen has its own), each with its own instruction.
  function pair(s, i) {
    var box = el("div", {"class": "pair"});
    [[s.original, "original"], [i, "perturbed: " + s.meta.perturb]].forEach(function (side) {
      var t = data.samples[side[0]], f = el("figure", {"class": "zoom side", "data-i": side[0]});
      f.appendChild(cropOf(side[0]));
      var cap = el("figcaption", {});
      var name = el("a", {href: "#sample=" + encodeURIComponent(t.id)}, side[1]);
      cap.appendChild(name);
      cap.appendChild(el("span", {"class": "tag " + t.outcome}, t.outcome));
      if (t.instruction) cap.appendChild(el("span", {"class": "said"}, t.instruction));
      f.appendChild(cap);
      box.appendChild(f);
    });
    return box;
  }

  function show(i, scroll) {
    if (i < 0 || i >= data.samples.length) return;
    var s = data.samples[i], row = document.getElementById("row-" + i);
    rows.forEach(function (r) { r.classList.remove("sel"); });
    row.classList.add("sel");
    current = i;
    detail.textContent = "";
    var head = el("div", {"class": "dhead"});
    head.appendChild(el("h3", {}, s.id));
    head.appendChild(el("span", {"class": "tag " + s.outcome}, s.outcome));
    var prev = el("button", {type: "button"}, "\u2190 prev"), next = el("button", {type: "button"}, "next \u2192");
    prev.onclick = function () { step(-1); };
    next.onclick = function () { step(1); };
    head.appendChild(prev);
    head.appendChild(next);
    detail.appendChild(head);
    if (s.instruction) detail.appendChild(el("p", {"class": "instr"}, s.instruction));
    var pics = el("div", {"class": "pics"});
    if (s.screen !== undefined) {
      var scr = data.screens[s.screen], wrap = el("div", {"class": "screen"});
      wrap.appendChild(el("img", {src: scr.src, alt: "screenshot of " + s.id, "class": "full"}));
      wrap.appendChild(overlay(s, scr));
      var thumb = row.querySelector("img.thumb");
      pics.appendChild(wrap);
      var lone = s.original === undefined;  // a perturbed sample's crop is in the pair below, beside its original's
      if (lone && thumb) {
        var z = el("figure", {"class": "zoom"});
        z.appendChild(el("img", {src: thumb.getAttribute("src"), alt: "zoomed crop of " + s.id, "class": "crop"}));
        z.appendChild(el("figcaption", {}, "zoomed: the dashed region"));
        pics.appendChild(z);
      } else if (lone && s.rect) {
        var lz = el("figure", {"class": "zoom"});
        lz.appendChild(zoomed(s, scr));
        lz.appendChild(el("figcaption", {}, "zoomed: the dashed region, drawn from the screenshot"));
        pics.appendChild(lz);
      }
    } else if (s.img_note) {
      pics.appendChild(el("p", {"class": "note"}, s.img_note));
    }
    detail.appendChild(pics);
    if (s.original !== undefined) detail.appendChild(pair(s, i));
    if (s.variants) {
      var vs = el("p", {"class": "variants"}, "perturbed variants: ");
      s.variants.forEach(function (j) {
        var v = data.samples[j];
        vs.appendChild(el("a", {href: "#sample=" + encodeURIComponent(v.id)}, v.meta.perturb));
        vs.appendChild(el("span", {"class": "tag " + v.outcome}, v.outcome));
      });
      detail.appendChild(vs);
    }
    var dl = el("dl", {"class": "meta"});
    field(dl, "task", s.task);
    Object.keys(s.meta).forEach(function (k) { field(dl, k, s.meta[k]); });
    field(dl, "score", s.value);
    field(dl, "latency (ms)", s.latency);
    // Boxes and points read in pixels of the screenshot, labelled (what a person compares with the image).
    var size = s.screen !== undefined ? data.screens[s.screen] : null;
    function px(k, v) {
      if (!size || !Array.isArray(v)) return v;
      if (k === "box" && v.length === 4) return "box [" + [v[0] * size.w, v[1] * size.h, v[2] * size.w,
                                                           v[3] * size.h].map(Math.round).join(", ") + "] px";
      if (k === "point" && v.length === 2) return "point (" + Math.round(v[0] * size.w) + ", "
                                                  + Math.round(v[1] * size.h) + ") px";
      return v;
    }
    Object.keys(s.truth || {}).forEach(function (k) { field(dl, "truth " + k, px(k, s.truth[k])); });
    Object.keys(s.pred).forEach(function (k) { field(dl, "predicted " + k, px(k, s.pred[k])); });
    Object.keys(s.before || {}).forEach(function (k) { field(dl, "baseline's " + k, px(k, s.before[k])); });
    field(dl, "stability", s.stability);
    if (s.format_error) field(dl, "format error", "the output did not parse");
    Object.keys(s.components || {}).forEach(function (k) { field(dl, k, s.components[k]); });
    Object.keys(s.notes || {}).forEach(function (k) { field(dl, k, s.notes[k]); });
    detail.appendChild(dl);
    if (s.error) { detail.appendChild(el("div", {}, "error:")); detail.appendChild(el("pre", {}, s.error)); }
    detail.appendChild(el("div", {}, "raw output:"));
    detail.appendChild(el("pre", {"class": "raw"}, s.raw === "" ? "(empty)" : s.raw));
    if (scroll) row.scrollIntoView({block: "nearest"});
    var hash = "#sample=" + encodeURIComponent(s.id);
    try { if (location.hash !== hash) history.replaceState(null, "", hash); } catch (e) { /* file: URLs */ }
  }

  function step(d) {
    // in the table's current order: a column sort moves the rows
    var visible = Array.prototype.slice.call(document.querySelectorAll("#samples tbody tr"))
      .filter(function (r) { return !r.hidden; });
    var pos = visible.findIndex(function (r) { return +r.getAttribute("data-i") === current; });
    var target = visible[Math.min(Math.max(pos + d, 0), visible.length - 1)];
    if (target) show(+target.getAttribute("data-i"), true);
  }

  function fromHash() {
    var m = /^#sample=(.*)$/.exec(location.hash);
    if (!m) return;
    var id = decodeURIComponent(m[1]);
    for (var i = 0; i < data.samples.length; i++) if (data.samples[i].id === id) { show(i, true); return; }
  }

  rows.forEach(function (row) { row.addEventListener("click", function () { show(+row.getAttribute("data-i")); }); });
  document.getElementById("f-outcome").addEventListener("change", applyFilters);
  document.getElementById("f-text").addEventListener("input", applyFilters);
  document.querySelectorAll(".f-slice").forEach(function (s) { s.addEventListener("change", applyFilters); });
  document.addEventListener("keydown", function (e) {
    if (e.target && /INPUT|SELECT|TEXTAREA/.test(e.target.tagName)) return;
    if (e.key === "j") step(1);
    if (e.key === "k") step(-1);
  });
  window.addEventListener("hashchange", fromHash);
  applyFilters();
  if (location.hash) fromHash(); else if (rows.length) show(0);
})();
