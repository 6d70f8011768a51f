// The outline judging page (TREC CAR Y3): keyboard, autosave and an outbox that survives reloads.
//
// The server renders the passages (escaped by Django); this script applies the labels
// to them and builds the transition rows. Data is only ever written with textContent,
// never as markup. Every change is a record {change_id, client_time, client_seq, ...}
// put first into localStorage (the outbox) and then sent, oldest first; it leaves the
// outbox when the server has it. The server stores a resent change only once.
(function () {
  "use strict";

  var dataEl = document.getElementById("outline-data");
  if (!dataEl) return;
  var S = JSON.parse(dataEl.textContent);
  var READONLY = !!S.readonly;
  var OUTBOX_KEY = "pooljudge:outbox:" + S.user;
  var SEQ_KEY = "pooljudge:seq";
  var POS_KEY = "pooljudge:position:" + S.assignment;
  var SESSION = uuid4();
  var NOTES_DELAY = 700;
  var MAX_RETRY_DELAY = 15000;
  var SEND_TIMEOUT = 20000;
  var TRANSITIONS = [["same", "Same topic"], ["coherent", "Coherent transition"], ["switch", "Topic switch"]];
  var GRADE = { must: "MUST", should: "SHOULD", can: "CAN" };

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
  var errors = {};          // item key -> message of a change the server refused
  var otherErrors = 0;      // refused changes of other pages (replayed from the outbox)
  var inflight = null;
  var sending = false, failures = 0, retryTimer = null, retryAt = 0, ticker = null;
  var signedOut = false;
  var memoryOutbox = null;  // when localStorage cannot be used
  var memorySeq = 0;

  // ----- small helpers -------------------------------------------------------------------------------------------
  function uuid4() {
    if (window.crypto && typeof window.crypto.randomUUID === "function") return window.crypto.randomUUID();
    var b = window.crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    var h = Array.prototype.map.call(b, function (x) { return (x + 256).toString(16).slice(1); }).join("");
    return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
  }

  function nextSeq() {
    try {
      var n = (parseInt(window.sessionStorage.getItem(SEQ_KEY) || "0", 10) || 0) + 1;
      n = Math.max(n, memorySeq + 1);
      window.sessionStorage.setItem(SEQ_KEY, String(n));
      memorySeq = n;
      return n;
    } catch (e) {
      memorySeq += 1;
      return memorySeq;
    }
  }

  function csrfToken() {
    var m = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    if (m) return decodeURIComponent(m[1]);
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function kbd(text) { return el("kbd", null, text); }

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

  // ----- outbox --------------------------------------------------------------------------------------------------
  function readOutbox() {
    if (memoryOutbox) return memoryOutbox.slice();
    try {
      var items = JSON.parse(window.localStorage.getItem(OUTBOX_KEY) || "[]");
      return Array.isArray(items) ? items : [];
    } catch (e) {
      return [];
    }
  }

  function writeOutbox(items) {
    if (!memoryOutbox) {
      try {
        window.localStorage.setItem(OUTBOX_KEY, JSON.stringify(items));
        return;
      } catch (e) {
        memoryOutbox = [];  // storage full or blocked: keep going in memory, and say so
        hint("This browser does not let the page keep unsent changes; keep this tab open until they are saved.");
      }
    }
    memoryOutbox = items.slice();
  }

  function dropFromOutbox(id) {
    writeOutbox(readOutbox().filter(function (it) { return it.id !== id; }));
  }

  function queueChange(layer, pid, pid2, value) {
    var body = {
      change_id: uuid4(), layer: layer, passage: byId[pid].pk, value: value,
      client_time: new Date().toISOString(), client_seq: nextSeq(), session_id: SESSION,
    };
    var key = itemKey(layer, pid);
    if (pid2 !== null) { body.passage2 = byId[pid2].pk; key = itemKey(layer, pairKey(pid, pid2)); }
    var items = readOutbox();
    items.push({ id: body.change_id, url: S.save_url, topic: S.topic, item: key, body: body });
    writeOutbox(items);
    delete errors[key];
    pump(true);
  }

  function pump(now) {
    if (READONLY) return;
    if (now) {
      // The assessor is at work (or the network is back): try at once, and start the backoff over.
      if (retryTimer) { clearTimeout(retryTimer); retryTimer = null; }
      failures = 0;
    }
    if (sending || retryTimer) { renderSaveState(); return; }
    sending = true;
    renderSaveState();
    sendNext();
  }

  function sendNext() {
    var items = readOutbox();
    if (!items.length) { sending = false; failures = 0; renderSaveState(); return; }
    var it = items[0];
    inflight = it;
    renderSaveState();
    var response = null;
    // A server that takes the connection and never answers must not hold the queue: give up and retry.
    var controller = typeof AbortController === "function" ? new AbortController() : null;
    var timeout = setTimeout(function () { if (controller) controller.abort(); }, SEND_TIMEOUT);
    fetch(it.url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify(it.body),
      signal: controller ? controller.signal : undefined,
    }).then(function (res) {
      response = res;
      return res.json().catch(function () { return null; });
    }).catch(function () {
      return null;
    }).then(function (payload) {
      clearTimeout(timeout);
      inflight = null;
      var status = response ? response.status : 0;
      if (response && response.ok) {
        dropFromOutbox(it.id);
        failures = 0;
        setSignedOut(false);
        if (it.url === S.save_url && payload) serverSays(payload);
        sendNext();
        return;
      }
      if (status === 400 || status === 404 || status === 405 || status === 413) {
        dropFromOutbox(it.id);  // the server will never take it: say so instead of retrying forever
        var message = payload && payload.message ? (payload.field ? payload.field + ": " : "") + payload.message
          : "the server refused this change (" + status + ")";
        if (it.url === S.save_url) errors[it.item] = message; else otherErrors += 1;
        hint("Not saved: " + message);
        sendNext();
        return;
      }
      if (status === 403 && payload && payload.signed_out) setSignedOut(true);
      failures += 1;
      var delay = Math.min(MAX_RETRY_DELAY, 1000 * Math.pow(2, failures - 1)) * (0.8 + 0.4 * Math.random());
      retryAt = Date.now() + delay;
      retryTimer = setTimeout(function () { retryTimer = null; pump(false); }, delay);
      sending = false;
      renderSaveState();
    });
  }

  function serverSays(payload) {
    if (payload.status && payload.status !== S.status) {
      S.status = payload.status;
      renderProgress();
    }
  }

  function setSignedOut(value) {
    if (signedOut === value) return;
    signedOut = value;
    var banner = document.getElementById("signed-out");
    if (banner) banner.hidden = !value;
  }

  // ----- save state ----------------------------------------------------------------------------------------------
  function pendingKeys() {
    var keys = {};
    readOutbox().forEach(function (it) { if (it.topic === S.topic) keys[it.item] = true; });
    return keys;
  }

  function itemState(key, pending) {
    if (errors[key]) return "error";
    if (dirty[key]) return "pending";
    if (inflight && inflight.topic === S.topic && inflight.item === key) return "saving";
    if (pending[key]) return failures > 0 ? "pending" : "saving";
    return null;
  }

  var STATE_RANK = { error: 3, pending: 2, saving: 1 };
  var STATE_TEXT = { error: "not saved", pending: "not yet saved", saving: "saving…", saved: "saved" };

  function worst(states) {
    var best = null;
    states.forEach(function (s) { if (s && (!best || STATE_RANK[s] > STATE_RANK[best])) best = s; });
    return best;
  }

  function showItemState(node, state, hasLabel, errorText) {
    if (!node) return;
    var s = state || (hasLabel ? "saved" : "");
    node.dataset.state = s;
    node.textContent = s ? STATE_TEXT[s] : "";
    node.title = errorText || "";
  }

  function renderSaveState() {
    var pending = pendingKeys();
    passages.forEach(function (p) {
      var keys = ["notes", "facet", "removal"].map(function (layer) { return itemKey(layer, p.id); });
      var state = worst(keys.map(function (k) { return itemState(k, pending); }));
      var error = keys.map(function (k) { return errors[k]; }).filter(Boolean).join("; ");
      var has = !!(L.notes[p.id] || facetList(p.id).length || L.removed[p.id] !== undefined);
      showItemState(p.el.querySelector('[data-role="save"]'), state, has, error);
      if (p.slot && p.slot.dataset.pair) {
        var tkey = itemKey("transition", p.slot.dataset.pair);
        showItemState(p.slot.querySelector('[data-role="save"]'), itemState(tkey, pending),
          !!L.transitions[p.slot.dataset.pair], errors[tkey]);
      }
    });

    var box = document.getElementById("savestate");
    if (!box) return;
    var queued = readOutbox().length;
    var typing = Object.keys(dirty).length;
    var errorCount = Object.keys(errors).length + otherErrors;
    var state, text;
    if (READONLY) {
      state = "saved"; text = "Read-only";
    } else if (queued && failures > 0) {
      state = "pending";
      var secs = Math.max(0, Math.ceil((retryAt - Date.now()) / 1000));
      text = queued + (queued === 1 ? " change" : " changes") + " not yet saved · " +
        (signedOut ? "signed out" : retryTimer ? "retrying in " + secs + " s" : "retrying…");
    } else if (queued) {
      state = "saving"; text = "Saving…";
    } else if (typing) {
      state = "pending"; text = "Not yet saved";
    } else if (errorCount) {
      state = "error"; text = errorCount + (errorCount === 1 ? " change was" : " changes were") + " refused";
    } else {
      state = "saved"; text = "All changes saved";
    }
    box.dataset.state = state;
    box.textContent = text;
    box.dataset.queued = String(queued);
    if (retryTimer && !ticker) {
      ticker = setInterval(function () { if (!retryTimer) { clearInterval(ticker); ticker = null; } renderSaveState(); }, 1000);
    }
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

    var others = (L.runs[pid] || []).filter(function (r) { return r !== S.run; });
    p.el.querySelector('[data-role="runs"]').textContent = others.length ? "also judged under " + others.join(", ") : "";
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
    banner.hidden = !(pr.complete || done);
    document.getElementById("done-text").textContent = pr.complete
      ? "Every passage is judged and every transition labelled. This assignment is done."
      : "Marked done, with " + pr.passagesLeft + " passages and " + pr.transitionsLeft + " transitions left.";
    var badge = document.getElementById("status-badge");
    var status = done || pr.complete ? "done" : S.status === "todo" ? "todo" : "started";
    badge.className = "status status-" + status;
    badge.textContent = status === "done" ? "Done" : status === "todo" ? "To do" : "Started";
    var mark = document.getElementById("mark-done");
    if (mark) {
      mark.textContent = done ? "Reopen " : "Mark done ";
      mark.appendChild(kbd("Shift D"));
    }
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
    try { window.sessionStorage.setItem(POS_KEY, String(index)); } catch (e) { /* position is a convenience */ }
  }

  function startIndex() {
    // A reload in this tab comes back to the same passage; otherwise start at the first one with work left.
    try {
      var saved = window.sessionStorage.getItem(POS_KEY);
      if (saved !== null && Number(saved) >= 0 && Number(saved) < passages.length) return Number(saved);
    } catch (e) { /* fall through */ }
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

  function markDone() {
    if (READONLY) return;
    var done = S.status !== "done";
    fetch(S.mark_url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify({ done: done }),
    }).then(function (res) {
      if (!res.ok) throw new Error(String(res.status));
      return res.json();
    }).then(function (payload) {
      S.status = payload.status;
      hint(done ? "Marked done." : "Opened again.");
      renderProgress();
    }).catch(function () {
      hint("Could not reach the server to mark the assignment; try again in a moment.");
    });
  }

  function goNext() {
    flushNotes();
    window.location.href = S.next_url;
  }

  // ----- keyboard ------------------------------------------------------------------------------------------------
  function onKey(ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.isComposing) return;
    var t = ev.target;
    var typing = t && (t.tagName === "TEXTAREA" || t.tagName === "INPUT" || t.tagName === "SELECT" || t.isContentEditable);
    if (typing) {
      if (ev.key === "Escape") {
        ev.preventDefault();
        var p = cur();
        if (p) flushNotes(p.id);
        t.blur();
        setCurrent(current, { scroll: false });
      }
      return;
    }
    var key = ev.key;
    if (armed) {
      armed = false;
      renderTransitions();
      if (key === "1" || key === "2" || key === "3") {
        ev.preventDefault();
        if (!READONLY) labelTransition(TRANSITIONS[Number(key) - 1][0]);
        return;
      }
      if (key === "Escape") { ev.preventDefault(); hint(""); return; }
    }
    var handled = true;
    switch (key) {
      case "j": case "ArrowDown": setCurrent(current + 1); break;
      case "k": case "ArrowUp": setCurrent(current - 1); break;
      case "Home": setCurrent(0); break;
      case "End": setCurrent(passages.length - 1); break;
      case "N": goNext(); break;
      default: handled = false;
    }
    if (!handled && !READONLY) {
      handled = true;
      if (/^[1-9]$/.test(key)) {
        var f = facets.filter(function (x) { return x.key === key; })[0];
        if (f) pickFacet(f.id); else hint("There is no facet " + key + ".");
      } else {
        switch (key) {
          case "o": pickFacet("other"); break;
          case "g": pickFacet("general"); break;
          case "f": cycleFacet(1); break;
          case "F": cycleFacet(-1); break;
          case "m": grade("must"); break;
          case "s": grade("should"); break;
          case "c": grade("can"); break;
          case "Backspace": case "Delete": grade(""); break;
          case "x": toggleRemoved(); break;
          case "t":
            var below = transitionBelow();
            if (below) {
              armed = true;
              hint("Transition " + cur().n + " → " + below.n + ": 1 same topic · 2 coherent transition · 3 topic switch · Esc cancels.");
              renderTransitions();
              reveal(below.slot);
            } else {
              hint(isRemoved(cur().id) ? "This passage is removed: it has no transition." : "There is no transition below the last kept passage.");
            }
            break;
          case "n":
            var notes = cur() && cur().notes;
            if (notes && !isRemoved(cur().id)) { notes.focus(); notes.setSelectionRange(notes.value.length, notes.value.length); }
            break;
          case "D": markDone(); break;
          default: handled = false;
        }
      }
    }
    if (handled) ev.preventDefault();
  }

  // ----- wiring --------------------------------------------------------------------------------------------------
  function applyOutbox() {
    // Changes not yet on the server are newer than what the page was rendered with: show them.
    readOutbox().forEach(function (it) {
      if (it.topic !== S.topic || !it.body) return;
      var b = it.body;
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
    });
  }

  function wire() {
    document.addEventListener("keydown", onKey);
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
    var mark = document.getElementById("mark-done");
    if (mark) mark.addEventListener("click", markDone);
    var nextLink = document.getElementById("next-assignment");
    if (nextLink) nextLink.addEventListener("click", function () { flushNotes(); });
    window.addEventListener("online", function () { pump(true); });
    window.addEventListener("focus", function () { if (retryTimer) pump(true); });
    window.addEventListener("storage", function (ev) { if (ev.key === OUTBOX_KEY) renderSaveState(); });
    window.addEventListener("pagehide", function () { flushNotes(); });
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "hidden") flushNotes(); else if (retryTimer) pump(true);
    });
  }

  passages.forEach(function (p) {
    var first = facetList(p.id)[0];
    if (first) activeFacet[p.id] = first.facet;
  });
  if (!READONLY) applyOutbox();
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
  pump(true);  // send what earlier pages left in the outbox first
  window.pooljudge = { outbox: readOutbox, progress: progress };
  document.body.dataset.ready = "outline";
})();
