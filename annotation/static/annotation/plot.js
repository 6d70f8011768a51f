// The plot labelling page (seed 000 §4.2, Appendix A): one query, its candidate chunks one at a time.
//
// Task 1: a graded answer per candidate (layer plot_grade). Task 2: the spans of the query that
// describe the candidate's plot (layer plot_spans), as [start, end) character offsets into the
// query counted in Unicode code points (as Python counts them), marked by mouse selection or with
// the keys. Saving goes through autosave.js. Data is only ever written with textContent.
(function () {
  "use strict";

  var dataEl = document.getElementById("plot-data");
  if (!dataEl) return;
  var S = JSON.parse(dataEl.textContent);
  var READONLY = !!S.readonly;
  var AS = window.PooljudgeAutosave;
  var el = AS.el;
  var QUERY = S.query || "";
  var LAYERS = { plot_grade: true, plot_spans: true };
  var ORDERED = S.ordered || null;

  // ----- the query's offsets: UTF-16 (the DOM) <-> code points (stored) -----------------------------------------
  var cpToU16 = [0];
  Array.from(QUERY).forEach(function (ch) { cpToU16.push(cpToU16[cpToU16.length - 1] + ch.length); });
  var u16ToCp = new Array(QUERY.length + 1);
  for (var k = cpToU16.length - 1, u = QUERY.length; u >= 0; u--) {
    while (k > 0 && cpToU16[k] > u) k--;
    u16ToCp[u] = cpToU16[k] === u ? k : k + 1;  // inside a surrogate pair: the next character
  }
  var words = [];
  QUERY.replace(/\S+/g, function (w, at) { words.push({ start: at, end: at + w.length }); return w; });

  // ----- model ---------------------------------------------------------------------------------------------------
  var cands = S.candidates.map(function (c, index) {
    var node = document.getElementById("candidate-" + c.n);
    return { id: String(c.id), pk: c.id, n: c.n, index: index, el: node, dot: document.querySelector('.cand-dot[data-n="' + c.n + '"]') };
  });
  var byId = {};
  cands.forEach(function (c) { byId[c.id] = c; });
  var scale = S.scale;  // [[value, label, key]]
  var L = { grades: Object.assign({}, S.labels.grades || {}), spans: Object.assign({}, S.labels.spans || {}) };
  var current = 0;
  var cursor = 0, anchor = 0;  // keyboard word selection: words[min..max]
  var queryEl = document.getElementById("query-text");

  function hint(text) {
    var h = document.getElementById("hint");
    if (h) h.textContent = text || "";
  }
  function itemKey(layer, pid) { return layer + ":" + pid; }
  function cur() { return cands[current]; }
  function spansOf(pid) { return L.spans[pid] || []; }
  function graded(pid) { return L.grades[pid] !== undefined && L.grades[pid] !== null; }
  function labelOf(value) {
    var e = scale.filter(function (s) { return s[0] === value; })[0];
    return e ? e[1] : String(value);
  }

  // ----- saving --------------------------------------------------------------------------------------------------
  var saver = AS.forPage(S, {
    hint: hint, changed: function () { renderSaveState(); }, progress: function () { renderProgress(); },
    remote: function (body) { applyBody(body); renderAll(); },
  });
  var served = AS.servedOrder(S, saver, hint, "candidate");

  function applyBody(b) {
    var pid = String(b.passage);
    if (!LAYERS[b.layer] || !byId[pid]) return;
    if (b.layer === "plot_grade") {
      if (b.value === null || b.value === undefined) delete L.grades[pid]; else L.grades[pid] = b.value;
    } else {
      if (b.value && b.value.length) L.spans[pid] = b.value; else delete L.spans[pid];
    }
  }

  function renderSaveState() {
    var pending = saver.pendingKeys();
    cands.forEach(function (c) {
      saver.showState(c.el.querySelector('[data-role="save"]'), [itemKey("plot_grade", c.id), itemKey("plot_spans", c.id)],
        graded(c.id) || spansOf(c.id).length > 0, pending);
    });
    var c = cur();
    if (c) {
      saver.showState(document.querySelector('[data-role="spans-save"]'), itemKey("plot_spans", c.id), spansOf(c.id).length > 0, pending);
    }
    saver.renderBox(0);
  }

  // ----- rendering -----------------------------------------------------------------------------------------------
  function selectedRange() {
    if (!words.length) return null;
    var a = Math.min(cursor, anchor), b = Math.max(cursor, anchor);
    return [words[a].start, words[b].end];
  }

  function renderQuery() {
    var c = cur();
    var marks = c ? spansOf(c.id).map(function (s) { return [cpToU16[s[0]], cpToU16[s[1]]]; }) : [];
    var sel = READONLY ? null : selectedRange();
    var cuts = {};
    cuts[0] = true; cuts[QUERY.length] = true;
    marks.concat(sel ? [sel] : []).forEach(function (s) { cuts[s[0]] = true; cuts[s[1]] = true; });
    var points = Object.keys(cuts).map(Number).sort(function (x, y) { return x - y; });
    queryEl.textContent = "";
    for (var i = 0; i + 1 < points.length; i++) {
      var a = points[i], b = points[i + 1];
      if (a >= b) continue;
      var seg = el("span", "q-seg", QUERY.slice(a, b));
      seg.dataset.start = String(a);
      if (marks.some(function (m) { return m[0] <= a && b <= m[1]; })) seg.classList.add("is-marked");
      if (sel && sel[0] <= a && b <= sel[1]) seg.classList.add("is-cursor");
      queryEl.appendChild(seg);
    }
    var list = document.getElementById("span-list");
    list.textContent = "";
    marks.forEach(function (m, i) {
      var li = el("li", "span-item");
      li.appendChild(el("span", "span-text", "“" + QUERY.slice(m[0], m[1]) + "”"));
      if (!READONLY) {
        var x = el("button", "span-remove", "×");
        x.type = "button";
        x.title = "Unmark";
        x.dataset.index = String(i);
        li.appendChild(x);
      }
      list.appendChild(li);
    });
    if (!marks.length) list.appendChild(el("li", "muted small", c && graded(c.id) && L.grades[c.id] > 0 ? "nothing marked yet" : "nothing marked"));
  }

  function renderCandidate(c) {
    var isCurrent = c.index === current;
    c.el.hidden = !isCurrent;
    var value = L.grades[c.id];
    c.el.querySelectorAll("button.answer").forEach(function (b) {
      b.setAttribute("aria-pressed", graded(c.id) && String(value) === b.dataset.value ? "true" : "false");
    });
    if (c.dot) {
      c.dot.classList.toggle("is-current", isCurrent);
      c.dot.dataset.grade = graded(c.id) ? String(value) : "";
      c.dot.classList.toggle("is-graded", graded(c.id));
      c.dot.title = "Candidate " + c.n + (graded(c.id) ? ": " + labelOf(value) : ": not answered");
      c.dot.setAttribute("aria-current", isCurrent ? "true" : "false");
    }
  }

  function progress() {
    return served.progress(AS.countDone(cands, function (c) { return graded(c.id); }));
  }

  function renderProgress() {
    var pr = progress();
    AS.renderWork(pr, S.status, "Every candidate is graded. This assignment is done.",
      "Marked done, with " + (pr.total - pr.done) + " candidates not graded.");
  }

  function renderAll() {
    cands.forEach(renderCandidate);
    renderQuery();
    renderProgress();
    renderSaveState();
  }

  // ----- actions -------------------------------------------------------------------------------------------------
  function setCurrent(index) {
    if (!cands.length) return;
    current = Math.max(0, Math.min(cands.length - 1, index));
    cands.forEach(renderCandidate);
    renderQuery();
    renderSaveState();
    var c = cur();
    c.el.focus({ preventScroll: true });
    saver.keepPosition(current);
  }

  function forward() {
    if (served.on && current >= cands.length - 1) served.next(cur() ? graded(cur().id) : null, cands.length);
    else setCurrent(current + 1);
  }

  function answer(raw) {
    var c = cur();
    if (!c) return;
    var value = raw === "" ? null : Number(raw);
    if ((graded(c.id) ? L.grades[c.id] : null) === value) return;
    if (value === null) delete L.grades[c.id]; else L.grades[c.id] = value;
    saver.queue(itemKey("plot_grade", c.id), { layer: "plot_grade", passage: c.pk, value: value });
    hint(value === null ? "Answer cleared for candidate " + c.n + "."
      : "Candidate " + c.n + ": " + labelOf(value) + "." + (value > 0 ? " Mark the words that describe it (s), then j." : " j for the next one."));
    renderCandidate(c);
    renderQuery();
    renderProgress();
  }

  function saveSpans(c, list) {
    var merged = AS.mergeSpans(list);
    if (JSON.stringify(merged) === JSON.stringify(spansOf(c.id))) return;
    if (merged.length) L.spans[c.id] = merged; else delete L.spans[c.id];
    saver.queue(itemKey("plot_spans", c.id), { layer: "plot_spans", passage: c.pk, value: merged });
    renderQuery();
    renderSaveState();
  }

  // Mark [a, b) given in UTF-16 offsets of the query, trimmed of white space.
  function markRange(a, b) {
    var c = cur();
    if (!c || READONLY) return false;
    while (a < b && /\s/.test(QUERY[a])) a++;
    while (b > a && /\s/.test(QUERY[b - 1])) b--;
    if (a >= b) return false;
    var span = [u16ToCp[a], u16ToCp[b]];
    saveSpans(c, spansOf(c.id).concat([span]));
    hint("Marked “" + QUERY.slice(a, b) + "” for candidate " + c.n + ".");
    return true;
  }

  function pointOffset(node, offset) {
    if (node.nodeType === 3) {
      var seg = node.parentElement.closest("[data-start]");
      return seg ? Number(seg.dataset.start) + offset : null;
    }
    if (node === queryEl) {
      var child = queryEl.childNodes[offset];
      return child && child.dataset ? Number(child.dataset.start) : QUERY.length;
    }
    var s = node.closest && node.closest("[data-start]");
    if (s && queryEl.contains(s)) return Number(s.dataset.start) + (offset ? s.textContent.length : 0);
    return null;
  }

  // The mouse selection as UTF-16 offsets into the query, clipped to it; null when it does not touch the query.
  function mouseSelection() {
    var sel = window.getSelection();
    if (!sel || sel.isCollapsed || !sel.rangeCount) return null;
    var range = sel.getRangeAt(0);
    if (!range.intersectsNode(queryEl)) return null;
    var a = queryEl.contains(range.startContainer) ? pointOffset(range.startContainer, range.startOffset) : 0;
    var b = queryEl.contains(range.endContainer) ? pointOffset(range.endContainer, range.endOffset) : QUERY.length;
    if (a === null || b === null || a >= b) return null;
    return [a, b];
  }

  function markSelection() {
    var m = mouseSelection();
    if (m) {
      window.getSelection().removeAllRanges();
      return markRange(m[0], m[1]);
    }
    var r = selectedRange();
    if (r && markRange(r[0], r[1])) { anchor = cursor; renderQuery(); return true; }
    return false;
  }

  function unmarkAtCursor() {
    var c = cur();
    if (!c || !words.length) return;
    var w = words[cursor];
    var at = [u16ToCp[w.start], u16ToCp[w.end]];
    var keep = spansOf(c.id).filter(function (s) { return s[1] <= at[0] || s[0] >= at[1]; });
    if (keep.length === spansOf(c.id).length) { hint("No marked span at the cursor."); return; }
    saveSpans(c, keep);
    hint("Unmarked.");
  }

  function moveWord(step, extend) {
    if (!words.length) return;
    cursor = Math.max(0, Math.min(words.length - 1, cursor + step));
    if (!extend) anchor = cursor;
    renderQuery();
  }


  // ----- keyboard and mouse --------------------------------------------------------------------------------------
  var answerKeys = {};
  scale.forEach(function (s) { if (s[2]) answerKeys[s[2]] = s[0]; });

  // The page's keys (the dispatch is autosave.js's): j / k move, each answer's key answers the current candidate.
  function wireKeys() {
    function back() { setCurrent(current - 1); }
    function clear() { answer(""); }
    var edit = {
      "Backspace": clear, "Delete": clear,
      "ArrowLeft": function (ev) { moveWord(-1, ev.shiftKey); },
      "ArrowRight": function (ev) { moveWord(1, ev.shiftKey); },
      "s": function () { if (!markSelection()) hint("Select words of the query first (mouse, or ← → with Shift)."); },
      "x": unmarkAtCursor,
      "X": function () { if (cur() && spansOf(cur().id).length) { saveSpans(cur(), []); hint("All spans unmarked."); } },
      "D": saver.actions.done, "R": saver.actions.reopen,
    };
    Object.keys(answerKeys).forEach(function (k) { edit[k] = function () { answer(String(answerKeys[k])); }; });
    AS.keys({
      readonly: READONLY,
      nav: {
        "j": forward, "ArrowDown": forward, "k": back, "ArrowUp": back,
        "Home": function () { setCurrent(0); },
        "End": function () { setCurrent(cands.length - 1); },
        "N": function () { window.location.href = S.next_url; },
      },
      edit: edit,
    });
  }

  function wire() {
    wireKeys();
    cands.forEach(function (c) {
      c.el.addEventListener("click", function (ev) {
        var b = ev.target.closest("button");
        if (!b || b.disabled || READONLY) return;
        if (b.classList.contains("grade")) answer(b.dataset.value);
      });
      if (c.dot) c.dot.addEventListener("click", function () { setCurrent(c.index); });
    });
    document.querySelectorAll(".cand-nav [data-action]").forEach(function (b) {
      b.addEventListener("click", function () { if (b.dataset.action === "next") forward(); else setCurrent(current - 1); });
    });
    if (!READONLY) {
      // A selection made with the mouse that starts or ends in the query marks that part of it.
      document.addEventListener("mouseup", function () {
        setTimeout(function () {
          var sel = window.getSelection();
          if (!sel || sel.isCollapsed || !(queryEl.contains(sel.anchorNode) || queryEl.contains(sel.focusNode))) return;
          if (mouseSelection()) markSelection();
        }, 0);
      });
      var button = document.getElementById("mark-selection");
      if (button) {
        button.addEventListener("mousedown", function (ev) { ev.preventDefault(); });  // keep the selection
        button.addEventListener("click", function () { if (!markSelection()) hint("Select words of the query first."); });
      }
      document.getElementById("span-list").addEventListener("click", function (ev) {
        var b = ev.target.closest("button.span-remove");
        var c = cur();
        if (!b || !c) return;
        var i = Number(b.dataset.index);
        saveSpans(c, spansOf(c.id).filter(function (_, j) { return j !== i; }));
        hint("Unmarked.");
      });
    }
  }

  saver.replay(applyBody);  // changes not yet on the server are newer than what the page was rendered with
  wire();
  renderAll();
  if (cands.length && ORDERED && ORDERED.waiting) setCurrent(cands.length - 1);  // the candidate served now
  else if (cands.length) setCurrent(saver.position(cands.length, function (i) { return !graded(cands[i].id); }));
  saver.pump(true);  // send what earlier pages left in the outbox first
  window.pooljudge = { outbox: saver.outbox, progress: progress, saver: saver, labels: L };
  document.body.dataset.ready = "plot";
})();
