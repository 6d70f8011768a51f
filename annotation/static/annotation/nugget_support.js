// A page that labels a list of items with a key each, for one generated answer: the nugget support page (the topic's
// nuggets, each support / partial support / no support, layer nugget_support; the server makes the item
// "<answer id>:<nugget id>") and the citation support page (each cited (sentence, passage) pair, full / partial /
// no support, layer citation_support). The page data says which: `layer`, `items` ([{id, n, fields}]: `fields` are
// the key a change of the item carries), `values` ([value, name, key]), `dom_prefix` (the items' element ids),
// `noun` and `ready`. j / k move between items; a label keeps the page on its item (every page: _label_stays.html). Saving goes through autosave.js.
// Text is only ever written with textContent.
(function () {
  "use strict";

  var dataEl = document.getElementById("nugget-data");
  if (!dataEl) return;
  var S = JSON.parse(dataEl.textContent);
  var READONLY = !!S.readonly;
  var AS = window.PooljudgeAutosave;
  var LAYER = S.layer;
  var NOUN = S.noun;

  var items = S.items.map(function (n, index) {
    var node = document.getElementById(S.dom_prefix + n.n);
    return { id: n.id, n: n.n, index: index, el: node, fields: n.fields };
  });
  var L = Object.assign({}, S.labels || {});
  var keys = {};
  S.values.forEach(function (v) { keys[v[2]] = v[0]; });
  var current = 0;

  function hint(text) {
    var h = document.getElementById("hint");
    if (h) h.textContent = text || "";
  }
  function itemKey(id) { return LAYER + ":" + id; }
  function labelled(id) { return L[id] !== undefined && L[id] !== null; }

  var saver = AS.forPage(S, {
    hint: hint, changed: function () { renderSaveState(); }, progress: function () { renderProgress(); },
    remote: function (body) { applyBody(body); renderAll(); },
  });

  // The item a change names: the one whose fields the change carries.
  function itemOf(b) {
    return items.filter(function (it) {
      return Object.keys(it.fields).every(function (k) { return b[k] === it.fields[k]; });
    })[0];
  }

  function applyBody(b) {
    var it = b.layer === LAYER ? itemOf(b) : null;
    if (!it) return;
    if (b.value === null || b.value === undefined) delete L[it.id]; else L[it.id] = b.value;
  }

  function renderSaveState() {
    var pending = saver.pendingKeys();
    items.forEach(function (it) {
      saver.showState(it.el.querySelector('[data-role="save"]'), itemKey(it.id), labelled(it.id), pending);
    });
    saver.renderBox(0);
  }

  function progress() { return AS.countDone(items, function (it) { return labelled(it.id); }); }

  function renderProgress() {
    if (S.waiting) return;  // nothing to count yet: the page says what it waits on, not "done" nor "0 of 0"
    var pr = progress();
    AS.renderWork(pr, S.status, "Every " + NOUN + " is labelled. This assignment is done.",
      "Marked done, with " + (pr.total - pr.done) + " " + NOUN + "s not labelled.");
  }

  function renderAll() {
    items.forEach(function (it) {
      it.el.classList.toggle("is-current", it.index === current);
      it.el.querySelectorAll("button.answer").forEach(function (b) {
        b.setAttribute("aria-pressed", L[it.id] === b.dataset.value ? "true" : "false");
      });
    });
    renderProgress();
    renderSaveState();
  }

  function setCurrent(index) {
    if (!items.length) return;
    current = Math.max(0, Math.min(items.length - 1, index));
    saver.keepPosition(current);
    renderAll();
    var node = items[current].el;
    node.focus({ preventScroll: true });
    node.scrollIntoView({ block: "nearest" });
  }

  function label(value) {
    if (READONLY || !items.length) return;
    var it = items[current];
    if (value === null) delete L[it.id]; else L[it.id] = value;
    saver.queue(itemKey(it.id), Object.assign({ layer: LAYER, value: value }, it.fields));
    renderAll();
    // A label keeps the page on its item (every judging page's convention, _label_stays.html): j moves on.
    if (value !== null && current < items.length - 1) hint("Labelled. j for the next " + NOUN + ".");
  }

  function openCitation(pid) {
    var d = document.getElementById("cited-" + pid);
    if (!d) return;
    d.open = true;
    d.scrollIntoView({ block: "nearest" });
  }

  // The page's keys (the dispatch is autosave.js's): j / k move, each value's key labels the current item.
  function wireKeys() {
    function clear() { label(null); }
    var edit = { "Backspace": clear, "Delete": clear, "D": saver.actions.done, "R": saver.actions.reopen };
    Object.keys(keys).forEach(function (k) { edit[k] = function () { label(keys[k]); }; });
    AS.keys({
      readonly: READONLY,
      nav: {
        "j": function () { setCurrent(current + 1); },
        "k": function () { setCurrent(current - 1); },
        "N": function () {  // a unit that waits for its topic's nuggets has one only when another unit is ready
          if (S.next_url) window.location.href = S.next_url; else hint("Nothing else in your queue is ready yet.");
        },
      },
      edit: edit,
    });
  }

  function wire() {
    wireKeys();
    items.forEach(function (it) {
      it.el.addEventListener("click", function (ev) {
        var b = ev.target.closest("button.answer");
        if (it.index !== current) setCurrent(it.index);
        if (b && !b.disabled && !READONLY) label(b.dataset.value);
      });
    });
    document.querySelectorAll("button.cite").forEach(function (b) {
      b.addEventListener("click", function () { openCitation(b.dataset.passage); });
    });
  }

  saver.replay(applyBody, true);
  wire();
  renderAll();
  if (items.length) setCurrent(saver.position(items.length, function (i) { return !labelled(items[i].id); }));
  saver.pump(true);
  window.pooljudge = { outbox: saver.outbox, progress: progress, saver: saver, labels: L };
  document.body.dataset.ready = S.ready;
})();
