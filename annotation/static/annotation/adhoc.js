// The ad hoc relevance page: a topic statement and its documents, one at a time (or a list).
//
// A grade per document (layer grade, a value of the campaign's scale) and, where the campaign asks for it, the
// parts of the document that make it relevant (layer evidence: [start, end) character offsets into the document's
// text, counted in Unicode code points as Python counts them). The topic's words are marked in the text (stemmed on
// the server; h turns it off). Saving goes through autosave.js. Text is only ever written with textContent.
(function () {
  "use strict";

  var dataEl = document.getElementById("adhoc-data");
  if (!dataEl) return;
  var S = JSON.parse(dataEl.textContent);
  var READONLY = !!S.readonly;
  var AS = window.PooljudgeAutosave;
  var el = AS.el;
  var LAYERS = { grade: true, evidence: true };
  var ORDERED = S.ordered || null;
  var LIST = S.view === "list";
  var showTerms = true;
  // Paragraphs are separated by a blank line (as the importers keep them); a single line break inside one is the
  // source's own wrapping (Cranfield's abstracts) and shows as a space.
  var PARAGRAPH_BREAK = /\n[ \t]*\n\s*/g, WHOLE_BREAK = /^\n[ \t]*\n\s*$/;

  // ----- model ---------------------------------------------------------------------------------------------------
  var docs = S.documents.map(function (d, index) {
    var node = document.getElementById("candidate-" + d.n);
    var text = d.text || "";
    var cpToU16 = [0];
    Array.from(text).forEach(function (ch) { cpToU16.push(cpToU16[cpToU16.length - 1] + ch.length); });
    var words = [];
    text.replace(/\S+/g, function (w, at) { words.push({ start: at, end: at + w.length }); return w; });
    return {
      id: String(d.id), pk: d.id, n: d.n, index: index, el: node, text: text, terms: d.terms || [], words: words,
      cpToU16: cpToU16, textEl: node.querySelector('[data-role="text"]'),
      dot: document.querySelector('.cand-dot[data-n="' + d.n + '"]'),
    };
  });
  var byId = {};
  docs.forEach(function (d) { byId[d.id] = d; });
  var scale = S.scale;  // [[value, name, key]]
  var L = { grades: Object.assign({}, S.labels.grades || {}), evidence: Object.assign({}, S.labels.evidence || {}) };
  var current = 0;
  var cursor = -1, anchor = -1;  // the keyboard's word selection in the current document: words[min..max]
  var findText = "", found = [], foundAt = -1;  // find in the document: the words sought, their places [a, b), the one shown

  function hint(text) {
    var h = document.getElementById("hint");
    if (h) h.textContent = text || "";
  }
  function itemKey(layer, pid) { return layer + ":" + pid; }
  function cur() { return docs[current]; }
  function graded(pid) { return L.grades[pid] !== undefined && L.grades[pid] !== null; }
  function evidenceOf(pid) { return L.evidence[pid] || []; }
  function nameOf(value) {
    var e = scale.filter(function (s) { return s[0] === value; })[0];
    return e ? e[1] : String(value);
  }
  function u16ToCp(d, u) {  // a UTF-16 offset of the text to its code point offset
    var lo = 0, hi = d.cpToU16.length - 1;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (d.cpToU16[mid] < u) lo = mid + 1; else hi = mid; }
    return lo;
  }

  // ----- saving --------------------------------------------------------------------------------------------------
  var saver = AS.forPage(S, {
    hint: hint, changed: function () { renderSaveState(); }, progress: function () { renderProgress(); },
    remote: function (body) { applyBody(body); renderAll(); },
  });
  var served = AS.servedOrder(S, saver, hint, "document");

  function applyBody(b) {
    var pid = String(b.passage);
    if (!LAYERS[b.layer] || !byId[pid]) return;
    if (b.layer === "grade") {
      if (b.value === null || b.value === undefined) delete L.grades[pid]; else L.grades[pid] = b.value;
    } else if (b.value && b.value.length) L.evidence[pid] = b.value; else delete L.evidence[pid];
  }

  function renderSaveState() {
    var pending = saver.pendingKeys();
    docs.forEach(function (d) {
      saver.showState(d.el.querySelector('[data-role="save"]'), [itemKey("grade", d.id), itemKey("evidence", d.id)],
        graded(d.id) || evidenceOf(d.id).length > 0, pending);
    });
    saver.renderBox(0);
  }

  // ----- rendering -----------------------------------------------------------------------------------------------
  // The text as paragraphs (split at line breaks), each cut where a term or evidence span starts or ends.
  function renderText(d) {
    var text = d.text;
    var marks = evidenceOf(d.id).map(function (s) { return [d.cpToU16[s[0]], d.cpToU16[s[1]]]; });
    var terms = showTerms ? d.terms.map(function (s) { return [d.cpToU16[s[0]], d.cpToU16[s[1]]]; }) : [];
    var sel = d.index === current ? keyRange(d) : null;
    var finds = d.index === current ? found : [];
    var cuts = {};
    cuts[0] = true; cuts[text.length] = true;
    marks.concat(terms, finds, sel ? [sel] : []).forEach(function (s) { cuts[s[0]] = true; cuts[s[1]] = true; });
    text.replace(PARAGRAPH_BREAK, function (m, at) { cuts[at] = true; cuts[at + m.length] = true; return m; });
    var points = Object.keys(cuts).map(Number).sort(function (x, y) { return x - y; });
    d.textEl.textContent = "";
    var para = el("p", "doc-para");
    d.textEl.appendChild(para);
    for (var i = 0; i + 1 < points.length; i++) {
      var a = points[i], b = points[i + 1];
      if (a >= b) continue;
      var piece = text.slice(a, b);
      if (WHOLE_BREAK.test(piece)) { para = el("p", "doc-para"); d.textEl.appendChild(para); continue; }
      var seg = el("span", "d-seg", piece);
      seg.dataset.start = String(a);
      if (marks.some(function (m) { return m[0] <= a && b <= m[1]; })) seg.classList.add("is-evidence");
      if (terms.some(function (m) { return m[0] <= a && b <= m[1]; })) seg.classList.add("is-term");
      if (sel && sel[0] <= a && b <= sel[1]) seg.classList.add("is-cursor");
      finds.forEach(function (m, i) {
        if (m[0] <= a && b <= m[1]) { seg.classList.add("is-found"); if (i === foundAt) seg.classList.add("is-found-current"); }
      });
      para.appendChild(seg);
    }
    var list = d.el.querySelector('[data-role="evidence"]');
    if (!list) return;
    list.textContent = "";
    evidenceOf(d.id).forEach(function (s, i) {
      var li = el("li", "span-item");
      var shown = text.slice(d.cpToU16[s[0]], d.cpToU16[s[1]]);
      li.appendChild(el("span", "span-text", "“" + (shown.length > 120 ? shown.slice(0, 117) + "…" : shown) + "”"));
      if (!READONLY) {
        var x = el("button", "span-remove", "×");
        x.type = "button";
        x.title = "Unmark";
        x.dataset.index = String(i);
        li.appendChild(x);
      }
      list.appendChild(li);
    });
    if (!evidenceOf(d.id).length) list.appendChild(el("li", "muted small", "nothing marked"));
  }

  // The words the keyboard selected (UTF-16 offsets), or null before the first arrow key in this document.
  function keyRange(d) {
    if (cursor < 0 || !d.words.length) return null;
    var a = Math.min(cursor, anchor), b = Math.max(cursor, anchor);
    return [d.words[a].start, d.words[b].end];
  }

  function moveWord(step, extend) {
    var d = cur();
    if (!d || !d.words.length) return;
    if (cursor < 0) { cursor = anchor = 0; } else {
      cursor = Math.max(0, Math.min(d.words.length - 1, cursor + step));
      if (!extend) anchor = cursor;
    }
    renderText(d);
    var seg = d.textEl.querySelector(".is-cursor");
    if (seg) seg.scrollIntoView({ block: "nearest" });
  }

  function renderDoc(d) {
    var isCurrent = d.index === current;
    d.el.hidden = !LIST && !isCurrent;
    d.el.classList.toggle("is-current", isCurrent);
    var value = L.grades[d.id];
    var badge = d.el.querySelector('[data-role="grade"]');
    if (badge) badge.textContent = graded(d.id) ? value + " " + nameOf(value) : "not graded";
    if (d.dot) {
      d.dot.classList.toggle("is-current", isCurrent);
      d.dot.dataset.grade = graded(d.id) ? String(value) : "";
      d.dot.classList.toggle("is-graded", graded(d.id));
      d.dot.title = "Document " + d.n + (graded(d.id) ? ": " + nameOf(value) : ": not graded");
      d.dot.setAttribute("aria-current", isCurrent ? "true" : "false");
    }
  }

  function renderGrades() {
    var d = cur();
    document.querySelectorAll(".adhoc-grades button.answer").forEach(function (b) {
      b.setAttribute("aria-pressed", d && graded(d.id) && String(L.grades[d.id]) === b.dataset.value ? "true" : "false");
    });
  }

  function progress() {
    return served.progress(AS.countDone(docs, function (d) { return graded(d.id); }));
  }

  function renderProgress() {
    var pr = progress();
    AS.renderWork(pr, S.status, "Every document is graded. This assignment is done.",
      "Marked done, with " + (pr.total - pr.done) + " documents not graded.");
  }

  function renderAll() {
    docs.forEach(function (d) { renderDoc(d); renderText(d); });
    renderGrades();
    renderProgress();
    renderSaveState();
  }

  // ----- actions -------------------------------------------------------------------------------------------------
  function setCurrent(index) {
    if (!docs.length) return;
    var before = current;
    current = Math.max(0, Math.min(docs.length - 1, index));
    if (before !== current) {
      cursor = anchor = -1; found = [];
      renderText(docs[before]);
      if (findText.trim()) { findIn(cur()); showFound(0); }
    }
    docs.forEach(renderDoc);
    renderText(cur());
    renderGrades();
    renderSaveState();
    var d = cur();
    d.el.focus({ preventScroll: !LIST });
    if (LIST) d.el.scrollIntoView({ block: "start" });
    saver.keepPosition(current);
  }

  function forward() {
    if (served.on && current >= docs.length - 1) served.next(cur() ? graded(cur().id) : null, docs.length);
    else setCurrent(current + 1);
  }

  function grade(raw) {
    var d = cur();
    if (!d) return;
    var value = raw === "" ? null : Number(raw);
    if ((graded(d.id) ? L.grades[d.id] : null) === value) return;
    if (value === null) delete L.grades[d.id]; else L.grades[d.id] = value;
    saver.queue(itemKey("grade", d.id), { layer: "grade", passage: d.pk, value: value });
    hint(value === null ? "Grade cleared for document " + d.n + "."
      : "Document " + d.n + ": " + nameOf(value) + "." + (S.evidence && value > 0 ? " Select what makes it relevant and press e, or j for the next." : " j for the next one."));
    renderDoc(d);
    renderGrades();
    renderProgress();
  }

  function saveEvidence(d, list) {
    var merged = AS.mergeSpans(list);
    if (JSON.stringify(merged) === JSON.stringify(evidenceOf(d.id))) return;
    if (merged.length) L.evidence[d.id] = merged; else delete L.evidence[d.id];
    saver.queue(itemKey("evidence", d.id), { layer: "evidence", passage: d.pk, value: merged });
    renderText(d);
    renderSaveState();
  }

  function pointOffset(d, node, offset) {
    if (node.nodeType === 3) {
      var seg = node.parentElement.closest("[data-start]");
      return seg ? Number(seg.dataset.start) + offset : null;
    }
    var child = node.childNodes[offset];
    var s = child && child.closest ? (child.dataset && child.dataset.start ? child : child.querySelector && child.querySelector("[data-start]")) : null;
    if (s && s.dataset.start) return Number(s.dataset.start);
    s = node.closest && node.closest("[data-start]");
    if (s && d.textEl.contains(s)) return Number(s.dataset.start) + (offset ? s.textContent.length : 0);
    return null;
  }

  // The mouse selection inside the current document's text as [start, end) in code points, trimmed of space.
  function selection(d) {
    var sel = window.getSelection();
    if (!sel || sel.isCollapsed || !sel.rangeCount) return null;
    var range = sel.getRangeAt(0);
    if (!d.textEl.contains(range.startContainer) || !d.textEl.contains(range.endContainer)) return null;
    var a = pointOffset(d, range.startContainer, range.startOffset);
    var b = pointOffset(d, range.endContainer, range.endOffset);
    if (a === null || b === null) return null;
    while (a < b && /\s/.test(d.text[a])) a++;
    while (b > a && /\s/.test(d.text[b - 1])) b--;
    if (a >= b) return null;
    return [u16ToCp(d, a), u16ToCp(d, b)];
  }

  function markEvidence() {
    var d = cur();
    if (!d || READONLY || !S.evidence) return;
    var span = selection(d);
    if (span) window.getSelection().removeAllRanges();
    else {
      var r = keyRange(d);
      if (r) { span = [u16ToCp(d, r[0]), u16ToCp(d, r[1])]; anchor = cursor; }
    }
    if (!span) { hint("Select what makes the document relevant first: with the mouse, or → and Shift →."); return; }
    saveEvidence(d, evidenceOf(d.id).concat([span]));
    hint("Marked as evidence for document " + d.n + ".");
  }

  // ----- find in the document ------------------------------------------------------------------------------------
  // Every place of the words sought in the current document (any case), the one shown with the evidence cursor on
  // its first word, so that Esc then e (or Shift → first) marks it.
  function escapeRegExp(t) { return t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }

  function findIn(d) {
    found = []; foundAt = -1;
    var q = findText.trim();
    if (!d || !q) return;
    var re = new RegExp(escapeRegExp(q).replace(/\s+/g, "\\s+"), "gi"), m;
    while ((m = re.exec(d.text)) !== null && found.length < 5000) {
      found.push([m.index, m.index + m[0].length]);
      if (!m[0].length) re.lastIndex++;
    }
  }

  function showFound(step) {
    var d = cur(), count = document.getElementById("find-count");
    if (found.length) {
      foundAt = foundAt < 0 ? 0 : (foundAt + step + found.length) % found.length;
      var at = found[foundAt][0];
      for (var i = 0; i < d.words.length; i++) if (d.words[i].end > at) { cursor = anchor = i; break; }
    }
    renderText(d);
    if (count) count.textContent = !findText.trim() ? "" : found.length ? (foundAt + 1) + " of " + found.length : "not in this document";
    var seg = d.textEl.querySelector(".is-found-current");
    if (seg) seg.scrollIntoView({ block: "nearest" });
  }

  function wireFind() {
    var box = document.getElementById("find-text");
    if (!box) return;
    box.addEventListener("input", function () { findText = box.value; findIn(cur()); showFound(0); });
  }

  // A key typed in the find box (the page's keys pass it here): Enter finds the next place, Shift Enter the one
  // before, Esc goes back to the document.
  function findKey(ev) {
    var box = document.getElementById("find-text");
    if (!box || ev.target !== box) return;
    if (ev.key === "Enter") { ev.preventDefault(); showFound(ev.shiftKey ? -1 : 1); }
    else if (ev.key === "Escape") { ev.preventDefault(); box.blur(); var d = cur(); if (d) d.el.focus({ preventScroll: true }); }
  }

  function toggleNarrative() {
    var n = document.getElementById("narrative");
    if (!n) { hint("This topic has no narrative."); return; }
    n.open = !n.open;
    hint(n.open ? "Narrative open (n closes it)." : "Narrative closed.");
  }

  // ----- keyboard and mouse --------------------------------------------------------------------------------------
  var gradeKeys = {};
  scale.forEach(function (s) { if (s[2]) gradeKeys[s[2]] = s[0]; });

  // The page's keys (the dispatch is autosave.js's): j / k move, each grade's key grades the current document.
  function wireKeys() {
    function clear() { grade(""); }
    var edit = {
      "Backspace": clear, "Delete": clear, "e": markEvidence,
      "ArrowLeft": function (ev) { moveWord(-1, ev.shiftKey); },
      "ArrowRight": function (ev) { moveWord(1, ev.shiftKey); },
      "E": function () { if (cur() && evidenceOf(cur().id).length) { saveEvidence(cur(), []); hint("Evidence unmarked."); } },
      "D": saver.actions.done, "R": saver.actions.reopen,
    };
    Object.keys(gradeKeys).forEach(function (k) { edit[k] = function () { grade(String(gradeKeys[k])); }; });
    AS.keys({
      readonly: READONLY,
      field: findKey,
      nav: {
        "j": forward,
        "k": function () { setCurrent(current - 1); },
        "n": toggleNarrative,
        "h": function () {
          showTerms = !showTerms; docs.forEach(renderText); hint(showTerms ? "The topic's words are marked." : "Words not marked.");
        },
        "N": function () { window.location.href = S.next_url; },
        "/": function () { var box = document.getElementById("find-text"); if (box) { box.focus(); box.select(); } },
      },
      edit: edit,
    });
  }

  function wire() {
    wireKeys();
    document.querySelectorAll(".adhoc-grades button.grade").forEach(function (b) {
      b.addEventListener("click", function () { if (!b.disabled && !READONLY) grade(b.dataset.value); });
    });
    docs.forEach(function (d) {
      if (d.dot) d.dot.addEventListener("click", function () { setCurrent(d.index); });
      d.el.addEventListener("click", function (ev) {
        if (LIST && d.index !== current) setCurrent(d.index);
        var b = ev.target.closest("button");
        if (!b || READONLY) return;
        if (b.dataset.action === "mark") markEvidence();
        if (b.classList.contains("span-remove")) {
          var i = Number(b.dataset.index);
          saveEvidence(d, evidenceOf(d.id).filter(function (_, j) { return j !== i; }));
          hint("Unmarked.");
        }
      });
      var mark = d.el.querySelector('[data-action="mark"]');
      if (mark) mark.addEventListener("mousedown", function (ev) { ev.preventDefault(); });  // keep the selection
    });
    document.querySelectorAll(".cand-nav [data-action]").forEach(function (b) {
      b.addEventListener("click", function () { if (b.dataset.action === "next") forward(); else setCurrent(current - 1); });
    });
  }

  function keepBarsMeasured() {
    // The grade bar sticks below the page's top bar, and whatever is scrolled to (a document, the evidence cursor)
    // lands below both: their heights as CSS variables (adhoc.css), kept as they change (wrapping, zoom).
    var root = document.documentElement, topbar = document.querySelector(".topbar"), bar = document.getElementById("adhoc-controls");
    function measure() {
      var sticky = topbar && getComputedStyle(topbar).position === "sticky" ? topbar.offsetHeight : 0;
      root.style.setProperty("--adhoc-top", sticky + "px");
      root.style.setProperty("--adhoc-bar", (bar ? bar.offsetHeight : 0) + "px");
    }
    measure();
    if (window.ResizeObserver) {
      var watch = new ResizeObserver(measure);
      [topbar, bar].forEach(function (e) { if (e) watch.observe(e); });
    }
    window.addEventListener("resize", measure);
  }

  saver.replay(applyBody);  // changes not yet on the server are newer than what the page was rendered with
  keepBarsMeasured();
  wire();
  wireFind();
  renderAll();
  if (docs.length && ORDERED && ORDERED.waiting) setCurrent(docs.length - 1);  // the document served now
  else if (docs.length) setCurrent(saver.position(docs.length, function (i) { return !graded(docs[i].id); }));
  saver.pump(true);  // send what earlier pages left in the outbox first
  window.pooljudge = { outbox: saver.outbox, progress: progress, saver: saver, labels: L };
  document.body.dataset.ready = "adhoc";
})();
