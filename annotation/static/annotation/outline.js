// The outline judging page (TREC CAR Y3): keyboard, and autosave through autosave.js (an outbox
// that survives reloads and network loss, active time per change, other tabs kept in step).
//
// The server renders the passages (escaped by Django); this script applies the labels
// to them and builds the transition rows. Data is only ever written with textContent,
// never as markup.
(function () {
  "use strict";

  var dataEl = document.getElementById("outline-data");
  if (!dataEl) return;
  var S = JSON.parse(dataEl.textContent);
  var READONLY = !!S.readonly;
  var NOTES_DELAY = 700;
  var AS = window.PooljudgeAutosave;
  var el = AS.el, kbd = AS.kbd;
  // The label sets come with the page's data, from the one registry (assessments/labels.py).
  var TRANSITIONS = S.label_sets.transitions.map(function (t) { return [t.value, t.name]; });
  var GRADE = {};
  S.label_sets.relevance.forEach(function (r) { GRADE[r.value] = r.name; });

  // ----- model ---------------------------------------------------------------------------------------------------
  var passages = S.passages.map(function (p, index) {
    var el = document.querySelector('.passage[data-pid="' + p.id + '"]');
    return {
      id: String(p.id), pk: p.id, n: p.n, index: index, el: el,
      slot: document.querySelector('.transition[data-before="' + p.id + '"]'),
      notes: el.querySelector('[data-role="notes"]'),
    };
  });
  var byId = {};
  passages.forEach(function (p) { byId[p.id] = p; });
  var facets = S.facets;
  var facetById = {};
  facets.forEach(function (f, i) { facetById[f.id] = f; f.order = i; });

  var L = { notes: {}, facets: {}, removed: {}, transitions: {}, runs: {} };
  Object.keys(L).forEach(function (k) { Object.assign(L[k], S.labels[k] || {}); });
  var sentNotes = Object.assign({}, L.notes);

  var current = 0;
  var activeFacet = {};     // passage id -> facet id picked (graded or not yet)
  var expanded = {};        // removed passages shown anyway
  var armed = false;        // "t" pressed: the next 1/2/3 labels the transition below
  var dirty = {};           // item keys typed but not queued yet (notes)
  var notesTimers = {};

  // ----- small helpers -------------------------------------------------------------------------------------------
  function hint(text) {
    var h = document.getElementById("hint");
    if (h) h.textContent = text || "";
  }

  function facetList(pid) { return L.facets[pid] || []; }
  function isRemoved(pid) { return L.removed[pid] === true; }
  function pairKey(a, b) { return a + "-" + b; }
  function itemKey(layer, pid) { return layer + ":" + pid; }

  function nextKept(p) {
    for (var i = p.index + 1; i < passages.length; i++) if (!isRemoved(passages[i].id)) return passages[i];
    return null;
  }
  function prevKept(p) {
    for (var i = p.index - 1; i >= 0; i--) if (!isRemoved(passages[i].id)) return passages[i];
    return null;
  }

  // ----- saving --------------------------------------------------------------------------------------------------
  var saver = AS.forPage(S, {
    hint: hint, changed: function () { renderSaveState(); }, progress: function () { renderProgress(); },
    remote: applyRemote,
  });

  function queueChange(layer, pid, pid2, value) {
    var fields = { layer: layer, passage: byId[pid].pk, value: value };
    var key = itemKey(layer, pid);
    if (pid2 !== null) { fields.passage2 = byId[pid2].pk; key = itemKey(layer, pairKey(pid, pid2)); }
    saver.queue(key, fields);
  }

  function applyRemote(body) {
    applyBody(body);
    var p = byId[String(body.passage)];
    if (p && body.layer === "facet" && !activeFacet[p.id] && facetList(p.id)[0]) activeFacet[p.id] = facetList(p.id)[0].facet;
    renderAll();
  }

  // ----- save state ----------------------------------------------------------------------------------------------
  function renderSaveState() {
    var pending = saver.pendingKeys();
    passages.forEach(function (p) {
      var keys = ["notes", "facet", "removal"].map(function (layer) { return itemKey(layer, p.id); });
      var has = !!(L.notes[p.id] || facetList(p.id).length || L.removed[p.id] !== undefined);
      saver.showState(p.el.querySelector('[data-role="save"]'), keys, has, pending, dirty);
      if (p.slot && p.slot.dataset.pair) {
        saver.showState(p.slot.querySelector('[data-role="save"]'), itemKey("transition", p.slot.dataset.pair),
          !!L.transitions[p.slot.dataset.pair], pending, dirty);
      }
    });

    saver.renderBox(Object.keys(dirty).length);
  }

  // ----- rendering -----------------------------------------------------------------------------------------------
  function renderPassage(p) {
    var pid = p.id;
    var removed = isRemoved(pid);
    var open = !removed || !!expanded[pid];
    p.el.classList.toggle("is-removed", removed);
    p.el.classList.toggle("is-expanded", removed && open);
    p.el.classList.toggle("is-current", p.index === current);
    p.el.querySelector(".p-body").hidden = !open;
    var bar = p.el.querySelector('[data-action="show"]');
    bar.hidden = !removed;
    bar.textContent = open ? "Removed (click to hide)" : "Removed (click to show)";
    var removeButton = p.el.querySelector('[data-action="remove"]');
    removeButton.textContent = removed ? "Restore " : "Remove ";
    removeButton.appendChild(kbd("x"));
    removeButton.classList.toggle("is-restore", removed);

    var grades = {};
    facetList(pid).forEach(function (e) { grades[e.facet] = e.relevance; });
    var active = activeFacet[pid];
    p.el.querySelectorAll("button.facet").forEach(function (b) {
      var f = b.dataset.facet;
      b.classList.toggle("is-active", f === active);
      b.dataset.grade = grades[f] || "";
      b.setAttribute("aria-pressed", grades[f] ? "true" : "false");
      b.querySelector(".facet-grade").textContent = grades[f] ? GRADE[grades[f]] : "";
    });
    var activeGrade = active ? grades[active] || "" : null;
    p.el.querySelectorAll("button.grade").forEach(function (b) {
      var g = b.dataset.grade;
      b.setAttribute("aria-pressed", g && activeGrade === g ? "true" : "false");
      if (!READONLY) b.disabled = !active || removed || (!g && !activeGrade);
    });
    var forFacet = p.el.querySelector('[data-role="for-facet"]');
    forFacet.textContent = active ? "for “" + facetById[active].heading + "”" : "pick a facet first";
    forFacet.classList.toggle("muted", !active);

    if (document.activeElement !== p.notes && p.notes.value !== (L.notes[pid] || "")) p.notes.value = L.notes[pid] || "";

    var summary = p.el.querySelector('[data-role="summary"]');
    if (removed) {
      summary.textContent = "";
    } else if (facetList(pid).length) {
      summary.textContent = facetList(pid).map(function (e) {
        return GRADE[e.relevance] + " · " + (facetById[e.facet] ? facetById[e.facet].heading : e.facet);
      }).join("   ");
    } else {
      summary.textContent = "not graded";
    }
    summary.classList.toggle("is-open", !removed && !facetList(pid).length);

    // The runs' names where the campaign shows them; judging blind, how many other articles (never which runs).
    var runs = L.runs[pid] || [], text = "";
    if (typeof runs === "number") {
      if (runs) text = "also judged in " + runs + " other article" + (runs === 1 ? "" : "s");
    } else {
      var others = runs.filter(function (r) { return r !== S.run; });
      if (others.length) text = "also judged under " + others.join(", ");
    }
    p.el.querySelector('[data-role="runs"]').textContent = text;
  }

  function buildSlot(slot) {
    slot.textContent = "";
    var label = el("span", "t-label");
    var buttons = el("div", "t-buttons");
    buttons.setAttribute("role", "group");
    TRANSITIONS.forEach(function (t, i) {
      var b = el("button", "t-choice t-" + t[0]);
      b.type = "button";
      b.dataset.transition = t[0];
      b.appendChild(kbd(String(i + 1)));
      b.appendChild(document.createTextNode(" " + t[1]));
      b.disabled = READONLY;
      buttons.appendChild(b);
    });
    var save = el("span", "itemsave");
    save.dataset.role = "save";
    slot.appendChild(label);
    slot.appendChild(buttons);
    slot.appendChild(save);
    slot.dataset.built = "1";
  }

  function renderTransitions() {
    var below = transitionBelow();
    passages.forEach(function (p) {
      var slot = p.slot;
      var prev = isRemoved(p.id) ? null : prevKept(p);
      if (!prev) { slot.hidden = true; delete slot.dataset.pair; return; }
      if (!slot.dataset.built) buildSlot(slot);
      var key = pairKey(prev.id, p.id);
      slot.hidden = false;
      slot.dataset.pair = key;
      slot.dataset.from = prev.id;
      var label = slot.querySelector(".t-label");
      label.textContent = "Transition ";
      label.appendChild(el("b", null, prev.n + " → " + p.n));
      var value = L.transitions[key];
      slot.querySelectorAll("button.t-choice").forEach(function (b) {
        b.setAttribute("aria-pressed", b.dataset.transition === value ? "true" : "false");
      });
      slot.classList.toggle("is-open", !value);
      slot.classList.toggle("is-armed", armed && below === p);
      slot.classList.toggle("is-below-current", below === p);
    });
  }

  function progress() {
    var kept = passages.filter(function (p) { return !isRemoved(p.id); });
    var passagesLeft = kept.filter(function (p) { return !facetList(p.id).length; }).length;
    var transitions = Math.max(0, kept.length - 1), transitionsLeft = 0;
    for (var i = 1; i < kept.length; i++) if (!L.transitions[pairKey(kept[i - 1].id, kept[i].id)]) transitionsLeft++;
    var total = passages.length + transitions;
    var done = total - passagesLeft - transitionsLeft;
    return {
      passagesLeft: passagesLeft, transitionsLeft: transitionsLeft, total: total,
      percent: total ? Math.round(100 * done / total) : 0,
      complete: passages.length > 0 && passagesLeft === 0 && transitionsLeft === 0,
    };
  }

  function renderProgress() {
    var pr = progress();
    document.getElementById("passages-left").textContent = String(pr.passagesLeft);
    document.getElementById("transitions-left").textContent = String(pr.transitionsLeft);
    document.getElementById("progress-bar").style.width = pr.percent + "%";
    var done = S.status === "done";
    var banner = document.getElementById("done-banner");
    banner.hidden = !done;
    document.getElementById("done-text").textContent = pr.complete
      ? "Every passage is judged and every transition labelled. This assignment is done."
      : "Marked done, with " + pr.passagesLeft + " passages and " + pr.transitionsLeft + " transitions left.";
    AS.renderStatus(S.status);
  }

  function renderAll() {
    passages.forEach(renderPassage);
    renderTransitions();
    renderProgress();
    renderSaveState();
  }

  // ----- actions -------------------------------------------------------------------------------------------------
  function cur() { return passages[current]; }

  function transitionBelow() {
    var p = cur();
    if (!p || isRemoved(p.id)) return null;
    return nextKept(p);
  }

  function setCurrent(index, opts) {
    if (!passages.length) return;
    index = Math.max(0, Math.min(passages.length - 1, index));
    var before = current;
    current = index;
    if (before !== index) renderPassage(passages[before]);
    renderPassage(passages[index]);
    renderTransitions();
    if (!opts || opts.scroll !== false) {
      if (index === 0) window.scrollTo(0, 0);  // the topic and its facets sit above the first passage
      else reveal(passages[index].el);
    }
    if (!opts || opts.focus !== false) passages[index].el.focus({ preventScroll: true });
    saver.keepPosition(index);
  }

  function startIndex() {
    // A reload in this tab comes back to the same passage; otherwise start at the first one with work left.
    var saved = saver.position(passages.length);
    if (saved !== null) return saved;
    for (var i = 0; i < passages.length; i++) {
      var p = passages[i];
      if (isRemoved(p.id)) continue;
      var q = nextKept(p);
      if (!facetList(p.id).length || (q && !L.transitions[pairKey(p.id, q.id)])) return i;
    }
    return 0;
  }

  function topbarHeight() {
    var bar = document.querySelector(".topbar");
    return bar ? bar.getBoundingClientRect().height : 0;
  }

  function reveal(node) {
    var r = node.getBoundingClientRect();
    var top = topbarHeight() + 8;
    if (r.top < top || r.bottom > window.innerHeight - 8) {
      window.scrollBy(0, r.top - top - 4);
    }
  }

  function pickFacet(fid) {
    var p = cur();
    if (!p || !facetById[fid]) return;
    if (isRemoved(p.id)) { hint("This passage is removed: press x to restore it first."); return; }
    activeFacet[p.id] = fid;
    var graded = facetList(p.id).some(function (e) { return e.facet === fid; });
    hint("Facet “" + facetById[fid].heading + "”: " + (graded ? "m / s / c change its grade, ⌫ clears it." : "now m, s or c."));
    renderPassage(p);
  }

  function cycleFacet(step) {
    var p = cur();
    if (!p) return;
    var i = activeFacet[p.id] ? facetById[activeFacet[p.id]].order : (step > 0 ? -1 : 0);
    pickFacet(facets[(i + step + facets.length) % facets.length].id);
  }

  function grade(relevance) {
    var p = cur();
    if (!p) return;
    if (isRemoved(p.id)) { hint("This passage is removed: press x to restore it first."); return; }
    var fid = activeFacet[p.id];
    if (!fid) { hint("Pick a facet first: 1–9, o (other) or g (general)."); return; }
    var list = facetList(p.id);
    var old = list.filter(function (e) { return e.facet === fid; })[0];
    if ((old ? old.relevance : "") === relevance) return;
    list = list.filter(function (e) { return e.facet !== fid; });
    if (relevance) list.push({ facet: fid, relevance: relevance });
    list.sort(function (a, b) { return facetById[a.facet].order - facetById[b.facet].order; });
    if (list.length) L.facets[p.id] = list; else delete L.facets[p.id];
    queueChange("facet", p.id, null, list.length ? list : null);
    hint(relevance ? GRADE[relevance] + " for “" + facetById[fid].heading + "”." : "Cleared “" + facetById[fid].heading + "”.");
    renderPassage(p);
    renderTransitions();
    renderProgress();
  }

  function toggleRemoved(p) {
    p = p || cur();
    if (!p) return;
    var removed = !isRemoved(p.id);
    L.removed[p.id] = removed;
    delete expanded[p.id];
    queueChange("removal", p.id, null, removed);
    hint(removed ? "Passage " + p.n + " removed (x restores it)." : "Passage " + p.n + " restored.");
    renderPassage(p);
    renderTransitions();
    renderProgress();
    reveal(p.el);
  }

  function labelTransition(value, from) {
    var p = from || cur();
    if (!p) return;
    if (isRemoved(p.id)) { hint("This passage is removed: it has no transition."); return; }
    var q = nextKept(p);
    if (!q) { hint("There is no transition below the last kept passage."); return; }
    var key = pairKey(p.id, q.id);
    if (L.transitions[key] === value) return;
    L.transitions[key] = value;
    queueChange("transition", p.id, q.id, value);
    hint("Transition " + p.n + " → " + q.n + ": " + TRANSITIONS.filter(function (t) { return t[0] === value; })[0][1] + ".");
    renderTransitions();
    renderProgress();
  }

  function flushNotes(pid) {
    var ids = pid ? [pid] : Object.keys(notesTimers);
    ids.forEach(function (id) {
      clearTimeout(notesTimers[id]);
      delete notesTimers[id];
      var key = itemKey("notes", id);
      if (!dirty[key]) return;
      delete dirty[key];
      var value = L.notes[id] || "";
      if (value === (sentNotes[id] || "")) { renderSaveState(); return; }
      sentNotes[id] = value;
      queueChange("notes", id, null, value);
    });
  }

  function goNext() {
    flushNotes();
    window.location.href = S.next_url;
  }

  // ----- keyboard ------------------------------------------------------------------------------------------------
  // The page's keys (the dispatch is autosave.js's). Esc in the notes saves them and goes back to the passage.
  function fieldKey(ev, plain) {
    if (!plain || ev.key !== "Escape") return;
    ev.preventDefault();
    var p = cur();
    if (p) flushNotes(p.id);
    ev.target.blur();
    setCurrent(current, { scroll: false });
  }

  // After t, the next key labels the transition (1, 2, 3) or cancels it (Esc); any other key disarms it and counts.
  function armedKey(ev) {
    if (!armed) return false;
    var key = ev.key;
    armed = false;
    renderTransitions();
    if (key === "1" || key === "2" || key === "3") {
      if (!READONLY) labelTransition(TRANSITIONS[Number(key) - 1][0]);
      return true;
    }
    if (key === "Escape") { hint(""); return true; }
    return false;
  }

  function facetKey(ev) {
    var f = facets.filter(function (x) { return x.key === ev.key; })[0];
    if (f) pickFacet(f.id); else hint("There is no facet " + ev.key + ".");
  }

  function armTransition() {
    var below = transitionBelow();
    if (below) {
      armed = true;
      hint("Transition " + cur().n + " → " + below.n + ": 1 same topic · 2 coherent transition · 3 topic switch · Esc cancels.");
      renderTransitions();
      reveal(below.slot);
    } else {
      hint(isRemoved(cur().id) ? "This passage is removed: it has no transition." : "There is no transition below the last kept passage.");
    }
  }

  function openNotes() {
    var notes = cur() && cur().notes;
    if (notes && !isRemoved(cur().id)) { notes.focus(); notes.setSelectionRange(notes.value.length, notes.value.length); }
  }

  function wireKeys() {
    function down() { setCurrent(current + 1); }
    function up() { setCurrent(current - 1); }
    function clear() { grade(""); }
    var edit = {
      "o": function () { pickFacet("other"); },
      "g": function () { pickFacet("general"); },
      "f": function () { cycleFacet(1); },
      "F": function () { cycleFacet(-1); },
      "m": function () { grade("must"); },
      "s": function () { grade("should"); },
      "c": function () { grade("can"); },
      "Backspace": clear, "Delete": clear,
      "x": function () { toggleRemoved(); },
      "t": armTransition,
      "n": openNotes,
      "D": saver.actions.done, "R": saver.actions.reopen,
    };
    for (var d = 1; d <= 9; d++) edit[String(d)] = facetKey;
    AS.keys({
      readonly: READONLY,
      field: fieldKey,
      intercept: armedKey,
      nav: {
        "j": down, "ArrowDown": down, "k": up, "ArrowUp": up,
        "Home": function () { setCurrent(0); },
        "End": function () { setCurrent(passages.length - 1); },
        "N": goNext,
      },
      edit: edit,
    });
  }

  // ----- wiring --------------------------------------------------------------------------------------------------
  function applyBody(b) {
    var pid = String(b.passage);
    if (!byId[pid]) return;
    if (b.layer === "transition") {
      if (byId[String(b.passage2)]) {
        if (b.value) L.transitions[pairKey(pid, String(b.passage2))] = b.value;
        else delete L.transitions[pairKey(pid, String(b.passage2))];
      }
    } else if (b.layer === "facet") {
      if (b.value && b.value.length) L.facets[pid] = b.value; else delete L.facets[pid];
    } else if (b.layer === "removal") {
      L.removed[pid] = b.value === true;
    } else if (b.layer === "notes") {
      L.notes[pid] = b.value || "";
      sentNotes[pid] = b.value || "";
    }
  }

  function wire() {
    wireKeys();
    passages.forEach(function (p) {
      p.el.addEventListener("mousedown", function (ev) {
        if (p.index !== current) setCurrent(p.index, { scroll: false, focus: ev.target === p.el });
      });
      p.el.addEventListener("click", function (ev) {
        var b = ev.target.closest("button");
        if (!b || b.disabled) return;
        if (b.dataset.action === "show") { expanded[p.id] = !expanded[p.id]; renderPassage(p); return; }
        if (READONLY) return;
        if (b.dataset.action === "remove") toggleRemoved(p);
        else if (b.dataset.facet) pickFacet(b.dataset.facet);
        else if (b.dataset.grade !== undefined && b.classList.contains("grade")) grade(b.dataset.grade);
      });
      p.notes.addEventListener("focus", function () { if (p.index !== current) setCurrent(p.index, { scroll: false, focus: false }); });
      p.notes.addEventListener("input", function () {
        L.notes[p.id] = p.notes.value;
        dirty[itemKey("notes", p.id)] = true;
        clearTimeout(notesTimers[p.id]);
        notesTimers[p.id] = setTimeout(function () { flushNotes(p.id); }, NOTES_DELAY);
        renderSaveState();
      });
      p.notes.addEventListener("blur", function () { flushNotes(p.id); });
      p.slot.addEventListener("click", function (ev) {
        var b = ev.target.closest("button.t-choice");
        if (!b || READONLY || !p.slot.dataset.from) return;
        labelTransition(b.dataset.transition, byId[p.slot.dataset.from]);
      });
    });
    var nextLink = document.getElementById("next-assignment");
    if (nextLink) nextLink.addEventListener("click", function () { flushNotes(); });
    window.addEventListener("pagehide", function () { flushNotes(); });
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "hidden") flushNotes();
    });
  }

  passages.forEach(function (p) {
    var first = facetList(p.id)[0];
    if (first) activeFacet[p.id] = first.facet;
  });
  saver.replay(applyBody);  // changes not yet on the server are newer than what the page was rendered with
  passages.forEach(function (p) {
    var first = facetList(p.id)[0];
    if (first && !activeFacet[p.id]) activeFacet[p.id] = first.facet;
  });
  wire();
  renderAll();
  if ("scrollRestoration" in window.history) window.history.scrollRestoration = "manual";
  if (passages.length) {
    var start = startIndex();
    setCurrent(start, { scroll: start > 0 });
  }
  saver.pump(true);  // send what earlier pages left in the outbox first
  window.pooljudge = { outbox: saver.outbox, progress: progress, saver: saver };
  document.body.dataset.ready = "outline";
})();
