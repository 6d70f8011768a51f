// The human-study pages: forced choice (pick one of an item's candidates; layer choice, the value is
// the chosen passage's external id) and pair rating (1-10; layer rating). One item at a time, all
// from the keyboard or the mouse; saving goes through autosave.js. Data is only written with textContent.
(function () {
  "use strict";

  var dataEl = document.getElementById("study-data");
  if (!dataEl) return;
  var S = JSON.parse(dataEl.textContent);
  var READONLY = !!S.readonly;
  var CHOICE = S.kind === "choice";
  var LAYER = CHOICE ? "choice" : "rating";
  var AS = window.PooljudgeAutosave;
  var NOUN = CHOICE ? "item" : "pair";

  var items = S.items.map(function (it, index) {
    var node = document.getElementById("item-" + it.n);
    return {
      key: it.key, n: it.n, index: index, el: node,
      buttons: Array.prototype.slice.call(node.querySelectorAll(CHOICE ? "button.option" : "button.rate")),
    };
  });
  var byKey = {};
  items.forEach(function (it) { byKey[it.key] = it; });
  var L = Object.assign({}, S.labels || {});
  var current = 0;
  var cursor = {};  // item key -> index of the candidate at the cursor (forced choice)

  function hint(text) {
    var h = document.getElementById("hint");
    if (h) h.textContent = text || "";
  }
  function cur() { return items[current]; }
  function answered(key) { return L[key] !== undefined && L[key] !== null; }

  var saver = AS.forPage(S, {
    hint: hint, changed: function () { renderSaveState(); }, progress: function () { renderProgress(); },
    remote: function (body) { applyBody(body); renderAll(); },
  });

  function applyBody(b) {
    if (b.layer !== LAYER || !byKey[b.item]) return;
    if (b.value === null || b.value === undefined) delete L[b.item]; else L[b.item] = b.value;
  }

  function renderSaveState() {
    var pending = saver.pendingKeys();
    items.forEach(function (it) {
      saver.showState(it.el.querySelector('[data-role="save"]'), it.key, answered(it.key), pending);
    });
    saver.renderBox(0);
  }

  function renderItem(it) {
    it.el.hidden = it.index !== current;
    var at = cursor[it.key];
    it.buttons.forEach(function (b, i) {
      var value = CHOICE ? b.dataset.value : Number(b.dataset.value);
      b.setAttribute("aria-pressed", answered(it.key) && L[it.key] === value ? "true" : "false");
      if (CHOICE) {
        b.classList.toggle("is-cursor", i === at);
        b.setAttribute("aria-selected", i === at ? "true" : "false");
      }
    });
  }

  function progress() { return AS.countDone(items, function (it) { return answered(it.key); }); }

  function renderProgress() {
    var pr = progress();
    AS.renderWork(pr, S.status, (CHOICE ? "Every item is answered." : "Every pair is rated.") + " This assignment is done.",
      "Marked done, with " + (pr.total - pr.done) + " " + NOUN + "s left.");
    var count = document.getElementById("item-count");
    if (count) count.textContent = (CHOICE ? "Item " : "Pair ") + (current + 1) + " of " + items.length;
  }

  function renderAll() {
    items.forEach(renderItem);
    renderProgress();
    renderSaveState();
  }

  function setCurrent(index) {
    if (!items.length) return;
    current = Math.max(0, Math.min(items.length - 1, index));
    renderAll();
    saver.keepPosition(current);
  }

  function pick(value) {
    var it = cur();
    if (!it || READONLY) return;
    if ((answered(it.key) ? L[it.key] : null) === value) return;
    if (value === null) delete L[it.key]; else L[it.key] = value;
    saver.queue(it.key, { layer: LAYER, item: it.key, value: value });
    if (value === null) hint("Cleared.");
    else if (CHOICE) hint("Picked candidate " + (indexOf(it, value) + 1) + "." + (current < items.length - 1 ? " n for the next item." : ""));
    else hint("Rated " + value + "." + (current < items.length - 1 ? " n for the next pair." : ""));
    renderItem(it);
    renderProgress();
    renderSaveState();
  }

  function indexOf(it, value) {
    for (var i = 0; i < it.buttons.length; i++) if (it.buttons[i].dataset.value === value) return i;
    return -1;
  }

  function moveCursor(step) {
    var it = cur();
    if (!it || !CHOICE || !it.buttons.length) return;
    var at = cursor[it.key];
    if (at === undefined) at = answered(it.key) ? indexOf(it, L[it.key]) : (step > 0 ? -1 : it.buttons.length);
    cursor[it.key] = Math.max(0, Math.min(it.buttons.length - 1, at + step));
    renderItem(it);
    var b = it.buttons[cursor[it.key]];
    b.scrollIntoView({ block: "nearest" });
  }


  // The page's keys (the dispatch is autosave.js's): n and p move, digits pick or rate the item shown.
  function digit(ev) {
    var it = cur(), key = ev.key;
    if (CHOICE) {
      var b = it.buttons[Number(key) - 1];
      if (key !== "0" && b) { cursor[it.key] = Number(key) - 1; pick(b.dataset.value); }
      else hint("There is no candidate " + key + ".");
    } else {
      pick(key === "0" ? 10 : Number(key));
    }
  }

  function choose() {
    var it = cur();
    if (CHOICE && cursor[it.key] !== undefined) pick(it.buttons[cursor[it.key]].dataset.value);
    else return false;
  }

  function next() { setCurrent(current + 1); }
  function prev() { setCurrent(current - 1); }
  function down() { moveCursor(1); }
  function up() { moveCursor(-1); }
  function clear() { pick(null); }
  var edit = {
    "j": down, "ArrowDown": down, "k": up, "ArrowUp": up, "Enter": choose, " ": choose,
    "Backspace": clear, "Delete": clear, "D": saver.actions.done, "R": saver.actions.reopen,
  };
  for (var d = 0; d <= 9; d++) edit[String(d)] = digit;

  function wireKeys() {
    AS.keys({
      readonly: READONLY,
      editable: function () { return !!cur(); },
      nav: { "n": next, "ArrowRight": next, "p": prev, "ArrowLeft": prev,
             "N": function () { window.location.href = S.next_url; } },
      edit: edit,
    });
  }

  function wire() {
    wireKeys();
    items.forEach(function (it) {
      it.buttons.forEach(function (b, i) {
        b.addEventListener("click", function () {
          if (READONLY) return;
          if (CHOICE) { cursor[it.key] = i; pick(b.dataset.value); } else pick(Number(b.dataset.value));
        });
      });
    });
    document.querySelectorAll(".item-nav [data-action]").forEach(function (b) {
      b.addEventListener("click", function () { setCurrent(current + (b.dataset.action === "next" ? 1 : -1)); });
    });
  }

  saver.replay(applyBody);
  wire();
  if (items.length) setCurrent(saver.position(items.length, function (i) { return !answered(items[i].key); }));
  else renderAll();
  saver.pump(true);
  window.pooljudge = { outbox: saver.outbox, progress: progress, saver: saver, labels: L };
  document.body.dataset.ready = S.kind;
})();
