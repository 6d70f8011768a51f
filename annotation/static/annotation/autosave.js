// Autosave shared by the assessor pages (outline, plot labelling, forced choice, pair rating).
//
// Every change is a record {change_id, client_time, client_seq, session_id, active_ms, ...} put first
// into localStorage (the outbox) and then sent, oldest first; it leaves the outbox when the server has
// it. The server stores a resent change only once (change_id), so nothing is lost and nothing doubled,
// also when the network drops, the assessor is signed out, or the page reloads.
//
// Active time: the time since the previous change (or since the page opened) while the page was
// visible, counting at most IDLE_MS after each input event: idle time is not counted. It travels
// with each change as active_ms.
//
// Tabs: pages of the same assignment tell each other (BroadcastChannel named after the assignment's
// token) that they are open and which changes they made; each page applies the other's changes.
//
// window.PooljudgeAutosave.create(options) returns the saver; the page keeps its own labels.
(function () {
  "use strict";

  var SEQ_KEY = "pooljudge:seq";
  var MAX_RETRY_DELAY = 15000;
  var SEND_TIMEOUT = 20000;
  var IDLE_MS = 60000;
  var STATE_RANK = { error: 3, pending: 2, saving: 1 };
  var STATE_TEXT = { error: "not saved", pending: "not yet saved", saving: "saving…", saved: "saved" };

  function uuid4() {
    if (window.crypto && typeof window.crypto.randomUUID === "function") return window.crypto.randomUUID();
    var b = window.crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    var h = Array.prototype.map.call(b, function (x) { return (x + 256).toString(16).slice(1); }).join("");
    return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
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

  // The assignment's status badge and its Mark done and Reopen buttons (#status-badge, #mark-done, #reopen: the one
  // that applies is shown). The badge shows the status the server stored (annotation.services.status), never one
  // guessed from the labels on the page.
  var STATUS_TEXT = { todo: "To do", in_progress: "In progress", done: "Done", revise: "To revise" };
  function renderStatus(status) {
    var badge = document.getElementById("status-badge");
    if (badge) {
      badge.className = "status status-" + status;
      badge.textContent = STATUS_TEXT[status] || status;
    }
    var mark = document.getElementById("mark-done"), reopen = document.getElementById("reopen");
    if (mark) mark.hidden = status === "done";
    if (reopen) reopen.hidden = status !== "done";
  }

  // A question asked in the page, in a modal <dialog> (a browser may switch window.prompt and confirm off): resolves
  // with the text typed (q.reason), true (without), or null when cancelled (Esc or the cancel button). Keys typed
  // in it stay in it: the page's own keys do nothing meanwhile.
  function ask(q) {
    return new Promise(function (resolve) {
      var dialog = el("dialog", "ask"), form = el("form"), text = el("p", null, q.text), input = null, answer = null;
      dialog.id = "ask";
      dialog.setAttribute("aria-labelledby", "ask-text");
      text.id = "ask-text";
      form.method = "dialog";
      form.appendChild(text);
      if (q.reason) {
        var label = el("label", null, q.reason);
        input = el("input");
        input.type = "text"; input.id = label.htmlFor = "ask-reason"; input.required = true;
        input.maxLength = 2000; input.autocomplete = "off";
        form.appendChild(label);
        form.appendChild(input);
      }
      var row = el("p", "ask-buttons"), ok = el("button", "button primary", q.confirm), no = el("button", "button", q.cancel);
      ok.type = "submit"; ok.id = "ask-confirm";
      no.type = "button"; no.id = "ask-cancel";
      row.appendChild(ok);
      row.appendChild(no);
      form.appendChild(row);
      dialog.appendChild(form);
      form.addEventListener("submit", function (ev) {
        var value = input ? input.value.trim() : true;
        if (!value) { ev.preventDefault(); input.focus(); return; }
        answer = value;
      });
      no.addEventListener("click", function () { dialog.close(); });
      dialog.addEventListener("keydown", function (ev) { ev.stopPropagation(); });
      var before = document.activeElement;
      dialog.addEventListener("close", function () {
        // Focus back where it was (else it can stay on the removed input, and the page's keys would not see a key).
        if (document.activeElement && dialog.contains(document.activeElement)) document.activeElement.blur();
        dialog.remove();
        if (before && before !== document.body && document.contains(before) && before.focus) before.focus();
        resolve(answer);
      });
      document.body.appendChild(dialog);
      dialog.showModal();
      (input || ok).focus();
    });
  }

  // Progress of a plot or study page: pr = {done, total, complete, percent}; the texts say it is complete or marked done.
  function renderWork(pr, status, completeText, markedText) {
    document.getElementById("work-done").textContent = String(pr.done);
    document.getElementById("progress-bar").style.width = pr.percent + "%";
    document.getElementById("done-banner").hidden = status !== "done";
    document.getElementById("done-text").textContent = pr.complete ? completeText : markedText;
    renderStatus(status);
  }

  // {done, total, complete, percent} of `things`, of which `isDone` says which are done.
  function countDone(things, isDone) {
    var done = things.filter(isDone).length;
    return { done: done, total: things.length, complete: things.length > 0 && done === things.length,
             percent: things.length ? Math.round(100 * done / things.length) : 0 };
  }

  // [[start, end], ...] sorted, overlapping or touching spans joined (as the server stores spans).
  function mergeSpans(list) {
    var merged = [];
    list.slice().sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; }).forEach(function (s) {
      var last = merged[merged.length - 1];
      if (last && s[0] <= last[1]) last[1] = Math.max(last[1], s[1]); else merged.push([s[0], s[1]]);
    });
    return merged;
  }

  // A page's served order (S.ordered: the campaign's judging order serves one item at a time): the page holds the
  // items served so far while the unit has the topic's whole pool, and past the last one the next is the server's to
  // choose from everyone's labels, so once the page's changes are saved it is loaded again. `noun` names an item.
  function servedOrder(S, saver, hint, noun) {
    var ordered = S.ordered || null, fetching = false;
    return {
      on: !!ordered,
      // The page's count of items done, as a share of the topic's pool.
      progress: function (pr) {
        if (!ordered) return pr;
        pr.total = ordered.total;
        pr.complete = pr.total > 0 && pr.done === pr.total;
        pr.percent = pr.total ? Math.round(100 * pr.done / pr.total) : 0;
        return pr;
      },
      // Past the last item shown: `labelled` says whether the current one is (null: none), `shown` how many are here.
      next: function (labelled, shown) {
        if (S.readonly || fetching) return;
        if (labelled === false) { hint("Label this " + noun + " first; the next one is chosen from the labels so far."); return; }
        if (ordered.stopped || (!ordered.waiting && labelled && shown >= ordered.total)) {
          hint("Nothing more to judge on this topic" + (ordered.reason ? ": " + ordered.reason : "") + ".");
          return;
        }
        fetching = true;
        hint("Saving, then fetching the next " + noun + "…");
        (function wait() {
          if (Object.keys(saver.pendingKeys()).length) { saver.pump(true); setTimeout(wait, 150); return; }
          window.location.reload();
        })();
      },
    };
  }

  function postJSON(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify(body),
    });
  }

  // options: user, assignment (token), topic, saveUrl, markUrl, reopenUrl, readonly, readonlyText (what the save box
  // says on a read-only page; "Read-only" unless given),
  //   hint(text), changed() (redraw save states), saved(payload) (the server's answer to a change),
  //   remote(body) (a change made in another tab of this assignment), status(status) (marked in another tab)
  function create(options) {
    var o = options;
    var OUTBOX_KEY = "pooljudge:outbox:" + o.user;
    var SESSION = uuid4();
    var hint = o.hint || function () {};
    var changed = o.changed || function () {};
    var memoryOutbox = null;  // when localStorage cannot be used
    var memorySeq = 0;
    var errors = {};          // item key -> message of a change the server refused
    var otherErrors = 0;      // refused changes of other pages (replayed from the outbox)
    var inflight = null;
    var sending = false, failures = 0, retryTimer = null, retryAt = 0, ticker = null;
    var signedOut = false;
    var otherTabs = {};       // sessions of other open tabs of this assignment

    // ----- active time -------------------------------------------------------------------------------------------
    var visible = document.visibilityState !== "hidden";
    var lastInput = Date.now();
    var activeMs = 0;

    function activity() {
      var now = Date.now();
      if (visible) activeMs += Math.max(0, Math.min(now - lastInput, IDLE_MS));
      lastInput = now;
    }

    function takeActive() {
      activity();
      var ms = Math.round(activeMs);
      activeMs = 0;
      return ms;
    }

    ["keydown", "mousedown", "mousemove", "wheel", "touchstart", "input"].forEach(function (name) {
      document.addEventListener(name, activity, { capture: true, passive: true });
    });
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "hidden") { activity(); visible = false; }
      else { visible = true; lastInput = Date.now(); }
    });

    // ----- outbox ------------------------------------------------------------------------------------------------
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

    // Queue one change: `key` names the label on the page (for its save state), `fields` are the
    // change's own fields (layer, passage, passage2, item, value). Returns the stored body.
    function queue(key, fields) {
      var body = {
        change_id: uuid4(), client_time: new Date().toISOString(), client_seq: nextSeq(),
        session_id: SESSION, active_ms: takeActive(),
      };
      Object.keys(fields).forEach(function (k) { body[k] = fields[k]; });
      var items = readOutbox();
      items.push({ id: body.change_id, url: o.saveUrl, topic: o.topic, assignment: o.assignment, item: key, body: body });
      writeOutbox(items);
      delete errors[key];
      broadcast({ type: "change", item: key, body: body });
      pump(true);
      return body;
    }

    function pump(now) {
      if (o.readonly) return;
      if (now) {
        // The assessor is at work (or the network is back): try at once, and start the backoff over.
        if (retryTimer) { clearTimeout(retryTimer); retryTimer = null; }
        failures = 0;
      }
      if (sending || retryTimer) { changed(); return; }
      sending = true;
      changed();
      sendNext();
    }

    function sendNext() {
      var items = readOutbox();
      if (!items.length) { sending = false; failures = 0; changed(); return; }
      var it = items[0];
      inflight = it;
      changed();
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
          if (it.url === o.saveUrl && payload && o.saved) o.saved(payload, it);
          sendNext();
          return;
        }
        // A refusal (4xx with the server's reason) will never be taken: it leaves the outbox with a visible
        // message naming it, and the changes behind it flow on. Signed out (403 {signed_out}), a timeout (408),
        // too many requests (429), a 4xx without the server's JSON (e.g. a proxy or CSRF page), 5xx and network
        // errors are retried with backoff.
        var refused = status === 400 || status === 404 || status === 405 || status === 413 || (
          status >= 400 && status < 500 && status !== 408 && status !== 429 && payload && payload.message &&
          !payload.signed_out && !payload.retry);
        if (refused) {
          dropFromOutbox(it.id);  // the server will never take it: say so instead of retrying forever
          var message = payload && payload.message ? (payload.field ? payload.field + ": " : "") + payload.message
            : "the server refused this change (" + status + ")";
          if (it.url === o.saveUrl) errors[it.item] = message; else otherErrors += 1;
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
        changed();
      });
    }

    function setSignedOut(value) {
      if (signedOut === value) return;
      signedOut = value;
      var banner = document.getElementById("signed-out");
      if (banner) banner.hidden = !value;
    }

    // ----- save state --------------------------------------------------------------------------------------------
    function pendingKeys() {
      var keys = {};
      readOutbox().forEach(function (it) { if (it.topic === o.topic) keys[it.item] = true; });
      return keys;
    }

    // "error", "saving", "pending" or null for one label; `typing` says it is being typed, not queued yet.
    function itemState(key, pending, typing) {
      if (errors[key]) return "error";
      if (typing) return "pending";
      if (inflight && inflight.topic === o.topic && inflight.item === key) return "saving";
      if (pending[key]) return failures > 0 ? "pending" : "saving";
      return null;
    }

    // One item's save state in `node` (its [data-role="save"]): the worst state of its labels (`keys`: one or a list),
    // their refusals, and `has` whether it holds a label; `typing` names the labels typed but not queued yet.
    function showState(node, keys, has, pending, typing) {
      keys = Array.isArray(keys) ? keys : [keys];
      var state = worst(keys.map(function (k) { return itemState(k, pending, !!(typing && typing[k])); }));
      var error = keys.map(function (k) { return errors[k]; }).filter(Boolean).join("; ");
      showItemState(node, state, has, error);
    }

    // Changes not yet on the server are newer than what the page was rendered with: apply(body) shows each of the
    // page's (its topic's, or with byAssignment its assignment's), oldest first; none on a read-only page.
    function replay(apply, byAssignment) {
      if (o.readonly) return;
      readOutbox().forEach(function (it) {
        if (it.body && (byAssignment ? it.assignment === o.assignment : it.topic === o.topic)) apply(it.body);
      });
    }

    // The page-wide save state in #savestate; `typing` counts labels typed but not queued yet.
    function renderBox(typing) {
      var box = document.getElementById("savestate");
      if (!box) return;
      var queued = readOutbox().length;
      var errorCount = Object.keys(errors).length + otherErrors;
      var state, text;
      if (o.readonly) {
        state = "saved"; text = o.readonlyText || "Read-only";
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
        ticker = setInterval(function () { if (!retryTimer) { clearInterval(ticker); ticker = null; } changed(); }, 1000);
      }
    }

    // ----- marking done, and where the assessor was --------------------------------------------------------------
    // Marking done (Shift D) and reopening (Shift R) are two actions and two requests: a mark never reopens a
    // finished unit, and reopening asks first. Each resolves with the new status (the old one when refused, cancelled
    // or not reached). Work with labels missing is done only when submitted incomplete: the server says what is
    // missing, the page asks why (reviewers see the reason), or the assessor keeps working.
    function markDone(status, reason) {
      return send(o.markUrl, reason ? { done: true, reason: reason } : { done: true }).then(function (payload) {
        if (payload.field === "reason" && !reason) {
          return ask({ text: "Not done yet: " + payload.message + ".", reason: "Why submit it incomplete? (reviewers see this)",
                       confirm: "Submit incomplete", cancel: "Keep working" }).then(function (why) {
            if (!why) { hint("Not marked done: " + payload.message + "."); return status; }
            return markDone(status, why);
          });
        }
        if (!payload.status) { hint("Not marked done: " + (payload.message || "refused") + "."); return status; }
        hint(status === "done" ? "It is done already (Shift R reopens it)." : reason ? "Submitted incomplete." : "Marked done.");
        return payload.status;
      }, unreached(status));
    }

    function reopen(status) {
      if (status !== "done") { hint("Only a done assignment can be reopened."); return Promise.resolve(status); }
      return ask({ text: "This assignment is done. Open it again? It goes back to in progress.", confirm: "Reopen",
                   cancel: "Keep it done" }).then(function (yes) {
        if (!yes) { hint("Still done."); return status; }
        return send(o.reopenUrl, {}).then(function (payload) {
          if (!payload.status) { hint("Not reopened: " + (payload.message || "refused") + "."); return status; }
          hint("Opened again: in progress.");
          return payload.status;
        }, unreached(status));
      });
    }

    function unreached(status) {
      return function () {
        hint("Could not reach the server to mark the assignment; try again in a moment.");
        return status;
      };
    }

    var POS_KEY = "pooljudge:position:" + o.assignment;

    // Where to start among `count` items: where this tab was before a reload, else the first that
    // isOpen(i) says has work left, else 0 (null instead of 0 when isOpen is not given). keepPosition stores it.
    function position(count, isOpen) {
      try {
        var saved = window.sessionStorage.getItem(POS_KEY);
        if (saved !== null && Number(saved) >= 0 && Number(saved) < count) return Number(saved);
      } catch (e) { /* position is a convenience */ }
      if (!isOpen) return null;
      for (var i = 0; i < count; i++) if (isOpen(i)) return i;
      return 0;
    }

    function keepPosition(index) {
      try { window.sessionStorage.setItem(POS_KEY, String(index)); } catch (e) { /* position is a convenience */ }
    }

    // POST a mark or a reopen: the server's answer ({field, message} when it refuses one: e.g. a reason is needed).
    function send(url, body) {
      return postJSON(url, body).then(function (res) {
        if (res.status === 400) return res.json();  // {field, message}: e.g. a reason is needed
        if (!res.ok) throw new Error(String(res.status));
        return res.json().then(function (payload) {
          broadcast({ type: "status", status: payload.status });
          return payload;
        });
      });
    }

    // ----- other tabs --------------------------------------------------------------------------------------------
    var channel = null;
    if (!o.readonly && o.assignment && typeof window.BroadcastChannel === "function") {
      channel = new window.BroadcastChannel("pooljudge:assignment:" + o.assignment);
      channel.onmessage = function (ev) {
        var m = ev.data;
        if (!m || m.session === SESSION) return;
        if (m.type === "hello") { broadcast({ type: "here" }); sawOtherTab(m.session, true); return; }
        if (m.type === "here") { sawOtherTab(m.session, true); return; }
        if (m.type === "bye") { sawOtherTab(m.session, false); return; }
        sawOtherTab(m.session, true);
        if (m.type === "change" && m.body && o.remote) {
          o.remote(m.body, m.item);
          hint("Changed in another tab of this assignment: shown here too.");
          changed();
        } else if (m.type === "status" && o.status) {
          o.status(m.status);
        }
      };
      window.addEventListener("pagehide", function () { broadcast({ type: "bye" }); });
    }

    function broadcast(message) {
      if (!channel) return;
      message.session = SESSION;
      try { channel.postMessage(message); } catch (e) { /* a closed channel: nothing to tell */ }
    }

    function sawOtherTab(session, open) {
      if (open) otherTabs[session] = true; else delete otherTabs[session];
      var banner = document.getElementById("other-tab");
      if (banner) banner.hidden = !Object.keys(otherTabs).length;
    }

    // ----- wiring ------------------------------------------------------------------------------------------------
    window.addEventListener("online", function () { pump(true); });
    window.addEventListener("focus", function () { if (retryTimer) pump(true); });
    window.addEventListener("storage", function (ev) { if (ev.key === OUTBOX_KEY) changed(); });
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState !== "hidden" && retryTimer) pump(true);
    });
    broadcast({ type: "hello" });

    return {
      session: SESSION,
      queue: queue,
      pump: pump,
      outbox: readOutbox,
      pendingKeys: pendingKeys,
      itemState: itemState,
      showState: showState,
      replay: replay,
      errors: errors,
      renderBox: renderBox,
      markDone: markDone,
      reopen: reopen,
      position: position,
      keepPosition: keepPosition,
      activeMs: function () { return activeMs; },
    };
  }

  // The saver of a page whose data S carries user, assignment, topic, save_url, mark_url, readonly and status:
  // hooks are hint, changed and remote as for create, and progress() to redraw when S.status changes.
  function forPage(S, hooks) {
    function setStatus(status) {
      if (status && status !== S.status) { S.status = status; hooks.progress(); }
    }
    // The server's answer to a change carries the unit's progress and status: the page shows those.
    function saved(payload) {
      if (payload.progress) S.server_progress = payload.progress;
      if (payload.status && payload.status !== S.status) S.status = payload.status;
      hooks.progress();
    }
    var saver = create({
      user: S.user, assignment: S.assignment, topic: S.topic, saveUrl: S.save_url, markUrl: S.mark_url,
      reopenUrl: S.reopen_url, readonly: !!S.readonly, readonlyText: S.readonly_text, hint: hooks.hint, changed: hooks.changed, remote: hooks.remote,
      saved: saved, status: setStatus,
    });
    // The page's two actions (its Shift D and Shift R, and the buttons): one at a time, then the page redrawn.
    var busy = false;
    function action(run) {
      return function () {
        if (S.readonly || busy) return;
        busy = true;
        run(S.status).then(function (status) { busy = false; S.status = status; hooks.progress(); });
      };
    }
    saver.actions = { done: action(saver.markDone), reopen: action(saver.reopen) };
    [["mark-done", "done"], ["reopen", "reopen"]].forEach(function (b) {
      var button = document.getElementById(b[0]);
      if (button) button.addEventListener("click", saver.actions[b[1]]);
    });
    return saver;
  }

  // ----- the one key dispatch of the judging pages ------------------------------------------------------------------
  // Only this module listens for keys on the page (issue 40 item 3); each page declares its keys with keys(page):
  //   nav:      {key: handler} always on (moving between items, the next unit);
  //   edit:     {key: handler} only when the page can be changed (not read-only, and editable() says so if given);
  //   intercept(ev): called first for a plain key; true when it took the key (e.g. a key armed by the one before);
  //   field(ev, plain): a key typed in an input, textarea, select or contenteditable (the page's keys ignore those);
  //                     plain is false with Ctrl, Alt, Meta or while composing.
  // A handler gets the event; returning false says the key was not its own (the browser keeps it), else the page's
  // key is taken (preventDefault). Keys with Ctrl, Alt or Meta, or while composing, are the browser's. Keys typed in
  // the page's questions (ask) stay there. A later keys() replaces the earlier page's keys.
  var keyPage = null;

  function inField(t) {
    return !!(t && (t.tagName === "TEXTAREA" || t.tagName === "INPUT" || t.tagName === "SELECT" || t.isContentEditable));
  }

  function run(map, ev) {
    if (!map || !Object.prototype.hasOwnProperty.call(map, ev.key)) return false;
    return map[ev.key](ev) !== false;
  }

  function onKey(ev) {
    var page = keyPage;
    if (!page) return;
    var plain = !(ev.ctrlKey || ev.metaKey || ev.altKey || ev.isComposing);
    if (inField(ev.target)) { if (page.field) page.field(ev, plain); return; }
    if (!plain) return;
    var handled = (page.intercept && page.intercept(ev)) || run(page.nav, ev) ||
      (!page.readonly && (!page.editable || page.editable()) && run(page.edit, ev));
    if (handled) ev.preventDefault();
  }

  function keys(page) {
    if (!keyPage) document.addEventListener("keydown", onKey);
    keyPage = page;
  }

  window.PooljudgeAutosave = {
    create: create, forPage: forPage, uuid4: uuid4, csrfToken: csrfToken, el: el, kbd: kbd,
    worst: worst, showItemState: showItemState, postJSON: postJSON,
    renderStatus: renderStatus, renderWork: renderWork, countDone: countDone, mergeSpans: mergeSpans,
    servedOrder: servedOrder, keys: keys,
  };
})();
