// Following background work: THE script the pages share (an import, a machine job, a pool's build and its
// retrieval jobs). A card `.job[data-status-url]` is followed until its work has ended: every half second it reads
// the JSON status (/jobs/<kind>/<id>/, retrieval.services.background.status_of; a pool's build adds its jobs) and
// shows the status, the bar (done of total), the step, the time left and each job's line; once the work has
// ended the page is loaded again, to show what it did. The page works without it (reload by hand).
(function () {
  "use strict";
  var ENDED = { done: true, failed: true, stopped: true, ready: true };
  var POLL_MS = 500;

  function text(card, selector, value) { var el = card.querySelector(selector); if (el) el.textContent = value; }

  function timeLeft(seconds) {
    if (seconds === null || seconds === undefined || !isFinite(seconds)) return "";
    if (seconds < 60) return "about " + Math.max(1, Math.round(seconds)) + " s left";
    if (seconds < 3600) return "about " + Math.round(seconds / 60) + " min left";
    return "about " + (seconds / 3600).toFixed(1) + " h left";
  }

  function show(card, data) {
    var status = card.querySelector(".job-status"), meter = card.querySelector("[data-role=meter]");
    var bar = card.querySelector(".job-bar"), lines = card.querySelector(".job-lines");
    if (status) { status.textContent = data.label; status.className = "status job-status status-" + data.status; }
    var done = data.done || 0, total = data.total || 0, eta = data.eta_seconds;
    if (data.jobs) {
      data.jobs.forEach(function (j) { done += j.done; total += j.total; });
      if (data.jobs.length === 1) eta = data.jobs[0].eta_seconds;
    }
    var step = data.step || (data.progress && data.progress.desc) || "";
    if (step) text(card, ".job-step", step + (total ? " (" + done + " of " + total + ")" : ""));
    text(card, ".job-eta", timeLeft(eta));
    if (meter && bar && total) {
      var percent = Math.min(100, Math.round(100 * done / total));
      meter.hidden = false;
      bar.style.width = percent + "%";
      meter.setAttribute("aria-valuenow", String(percent));
    }
    if (lines && data.jobs) {
      lines.textContent = "";
      data.jobs.forEach(function (j) {
        var li = document.createElement("li");
        li.textContent = j.line;
        lines.appendChild(li);
      });
    }
    if (data.candidates !== undefined) text(card, ".job-candidates", String(data.candidates));
    card.dataset.status = data.status;
  }

  function follow(card) {
    var url = card.dataset.statusUrl;
    if (!url || ENDED[card.dataset.status]) return;
    var meter = card.querySelector("[data-role=meter]");
    if (meter) meter.hidden = false;
    function poll() {
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.json(); })
        .then(function (data) {
          show(card, data);
          if (data.finished) { window.location.reload(); } else { window.setTimeout(poll, POLL_MS); }
        })
        .catch(function () { window.setTimeout(poll, 3000); });
    }
    window.setTimeout(poll, POLL_MS);
  }

  Array.prototype.forEach.call(document.querySelectorAll(".job[data-status-url]"), follow);
})();
