// The nugget creation page: the assessor writes the topic's nugget bank. Every edit (a nugget added or its text
// changed, vital / okay, moved, taken out) saves the whole bank as the value of layer `nuggets` through autosave.js.
// A nugget keeps its id (n1, n2, …, as assessments.services.nuggets.next_id makes them) through edits.
(function () {
  "use strict";

  var dataEl = document.getElementById("nugget-bank-data");
  if (!dataEl) return;
  var S = JSON.parse(dataEl.textContent);
  var READONLY = !!S.readonly;
  var AS = window.PooljudgeAutosave;
  var el = AS.el;
  var KEY = "nuggets:bank";
  var bank = S.nuggets.slice();
  // The bank's version this page has seen: the change_id of its latest change (the server's, then each one this page
  // or another tab of it makes). Each save says it is based on it; the server refuses one based on an older version
  // (409: another device saved since), so no one's nugget is dropped by an older copy of the bank.
  var version = S.version || null;
  var suggestions = Array.isArray(S.suggestions) ? S.suggestions : null;  // only where the campaign shows them
  var current = bank.length ? 0 : -1;
  var editing = null;  // the id being edited, or "" for a new nugget
  var list = document.getElementById("bank-list");
  var form = document.getElementById("nugget-form");
  var input = document.getElementById("nugget-text");
  var vital = document.getElementById("nugget-vital");

  function hint(text) {
    var h = document.getElementById("hint");
    if (h) h.textContent = text || "";
  }

  var saver = AS.forPage(S, {
    hint: hint, changed: function () { renderSaveState(); }, progress: function () { renderProgress(); },
    remote: function (body) {
      if (body.layer === "nuggets" && Array.isArray(body.value)) { bank = body.value; version = body.change_id; render(); }
    },
  });

  function renderSaveState() { saver.renderBox(0); }
  // As annotation.services.nugget_creation.bank_progress: the assessor's own bank may be marked done (Shift D) once
  // it holds a vital nugget; no save makes the unit done.
  function progress() {
    var done = S.own && bank.some(function (n) { return n.importance === "vital"; }) ? 1 : 0;
    return { done: done, total: 1, complete: done === 1, percent: done * 100 };
  }
  function renderProgress() {
    AS.renderWork(progress(), S.status, "You marked the bank done; you can go on editing it (Shift R reopens it).",
      "Submitted without a vital nugget.");
  }

  // A new nugget's id: none the bank holds, nor any the server named in use for the topic (S.ids_in_use: another
  // bank's, or one a support label names, e.g. of a nugget taken out), so no old label counts for the new text.
  var inUse = Array.isArray(S.ids_in_use) ? S.ids_in_use : [];
  function nextId() {
    var taken = {};
    inUse.forEach(function (id) { taken[id] = true; });
    bank.forEach(function (n) { taken[n.id] = true; });
    var number = bank.length + 1;
    while (taken["n" + number]) number++;
    return "n" + number;
  }

  function render() {
    list.textContent = "";
    bank.forEach(function (n, i) {
      var li = el("li", "nugget" + (i === current ? " is-current" : ""));
      li.dataset.id = n.id;
      li.id = "bank-" + (i + 1);
      var head = el("div", "nugget-head");
      head.appendChild(el("span", "p-num", String(i + 1)));
      head.appendChild(el("span", "nugget-text", n.text));
      head.appendChild(el("span", "importance importance-" + n.importance, n.importance));
      if (n.suggested) {
        var edited = n.suggested.text !== n.text || n.suggested.importance !== n.importance;
        var mark = el("span", "origin-machine", edited ? "suggested, edited" : "suggested");
        mark.title = "The machine suggested: " + n.suggested.text + " (" + n.suggested.importance + ")";
        head.appendChild(mark);
      }
      li.appendChild(head);
      li.addEventListener("click", function () { current = i; render(); });
      list.appendChild(li);
    });
    document.getElementById("bank-empty").hidden = bank.length > 0;
    renderSuggestions();
    renderProgress();
    renderSaveState();
  }

  function same(text) { return text.split(/\s+/).join(" ").trim(); }
  function taken(sg) {
    return bank.some(function (n) {
      return same(n.text) === same(sg.text) || (n.suggested && same(n.suggested.text) === same(sg.text));
    });
  }

  function renderSuggestions() {
    if (!suggestions) return;
    var ol = document.getElementById("suggestion-list");
    ol.textContent = "";
    suggestions.forEach(function (sg, i) {
      var done = taken(sg);
      var li = el("li", "nugget suggestion" + (done ? " is-taken" : ""));
      li.id = "suggestion-" + (i + 1);
      var head = el("div", "nugget-head");
      head.appendChild(el("span", "nugget-text", sg.text));
      head.appendChild(el("span", "importance importance-" + sg.importance, sg.importance));
      if (!READONLY) {
        var button = el("button", "button", done ? "in the bank" : "take");
        button.type = "button";
        button.disabled = done;
        button.addEventListener("click", function () { take(sg); });
        head.appendChild(button);
      }
      li.appendChild(head);
      ol.appendChild(li);
    });
    document.getElementById("suggestions-empty").hidden = suggestions.length > 0;
  }

  function take(sg) {
    if (READONLY || !sg || taken(sg)) return;
    bank.push({ id: nextId(), text: sg.text, importance: sg.importance, origin: "machine",
                suggested: { text: sg.text, importance: sg.importance } });
    current = bank.length - 1;
    save("Taken from the suggestions: e edits it.");
  }

  function save(message) {
    S.own = true;
    var sent = saver.queue(KEY, { layer: "nuggets", base: version, value: bank.map(function (n) {
      var out = { id: n.id, text: n.text, importance: n.importance, origin: n.origin || "assessor" };
      if (n.suggested) out.suggested = n.suggested;
      return out;
    }) });
    version = sent.change_id;
    render();
    if (message) hint(message);
  }

  function startEdit(id) {
    if (READONLY || !form) return;
    editing = id;
    var n = bank.filter(function (x) { return x.id === id; })[0];
    input.value = n ? n.text : "";
    vital.checked = n ? n.importance === "vital" : false;
    input.focus();
    hint(n ? "Editing nugget " + (current + 1) + ": Enter saves, Esc leaves." : "A new nugget: Enter saves, Esc leaves.");
  }

  function finishEdit() {
    var text = input.value.trim();
    if (!text) { hint("A nugget needs its text."); return; }
    var clash = bank.some(function (x) { return x.id !== editing && x.text.split(/\s+/).join(" ") === text.split(/\s+/).join(" "); });
    if (clash) { hint("That nugget is in the bank already."); return; }
    var importance = vital.checked ? "vital" : "okay";
    if (editing) {
      bank = bank.map(function (x) { return x.id === editing ? Object.assign({}, x, { text: text, importance: importance }) : x; });
    } else {
      bank.push({ id: nextId(), text: text, importance: importance, origin: "assessor" });
      current = bank.length - 1;
    }
    editing = null;
    input.value = "";
    vital.checked = false;
    input.blur();
    save("Saved.");
  }

  function move(step) {
    var to = current + step;
    if (current < 0 || to < 0 || to >= bank.length) return;
    var moved = bank.splice(current, 1)[0];
    bank.splice(to, 0, moved);
    current = to;
    save("Moved.");
  }

  // The page's keys (the dispatch is autosave.js's): j / k move in the bank, Esc in the nugget's box leaves it.
  function fieldKey(ev, plain) {
    if (plain && ev.target === input && ev.key === "Escape") {
      editing = null; input.value = ""; input.blur(); hint(""); ev.preventDefault();
    }
  }

  function at() { return current >= 0 ? bank[current] : null; }

  function wireKeys() {
    AS.keys({
      readonly: READONLY,
      field: fieldKey,
      nav: {
        "j": function () { if (bank.length) { current = Math.min(bank.length - 1, current + 1); render(); } },
        "k": function () { if (bank.length) { current = Math.max(0, current - 1); render(); } },
        "N": function () { window.location.href = S.next_url; },
      },
      edit: {
        "a": function () { startEdit(""); },
        "e": function () { var n = at(); if (n) startEdit(n.id); },
        "v": function () {
          var n = at();
          if (n) { n.importance = n.importance === "vital" ? "okay" : "vital"; save("Nugget " + (current + 1) + " is " + n.importance + "."); }
        },
        "t": function () {
          if (suggestions) take(suggestions.filter(function (sg) { return !taken(sg); })[0]);
          else return false;
        },
        "x": takeOut, "Delete": takeOut,
        "ArrowUp": function (ev) { if (ev.shiftKey) move(-1); else return false; },
        "ArrowDown": function (ev) { if (ev.shiftKey) move(1); else return false; },
        "D": saver.actions.done, "R": saver.actions.reopen,
      },
    });
  }

  function takeOut() {
    var n = at();
    if (n) { bank.splice(current, 1); current = Math.min(current, bank.length - 1); save("Taken out."); }
  }

  if (form) form.addEventListener("submit", function (ev) { ev.preventDefault(); finishEdit(); });
  saver.replay(function (body) {  // the assignment's changes not yet on the server: the bank as the assessor left it
    if (body.layer === "nuggets" && Array.isArray(body.value)) {
      bank = body.value;
      version = body.change_id;  // not yet sent: the bank's version once it is
      S.own = true;
    }
  }, true);
  wireKeys();
  render();
  saver.pump(true);
  window.pooljudge = { outbox: saver.outbox, progress: progress, saver: saver, bank: function () { return bank; } };
  document.body.dataset.ready = "nugget_bank";
})();
