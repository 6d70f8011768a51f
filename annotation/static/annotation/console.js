// The organiser's console: small enhancements of ordinary forms (each page works without this script).
// (background work is followed by jobs.js, which the console's pages load beside this script);
// - the new-campaign form shows the fields that apply (topics from a file or a pick, plot settings) and
//   makes the topic list searchable; the upload form shows the options of the chosen kind;
// - puts the keyboard focus on what a POST answered with (problems, a password shown once, a preview).
(function () {
  "use strict";
  function each(selector, fn, root) { Array.prototype.forEach.call((root || document).querySelectorAll(selector), fn); }

  function campaignForm(form) {
    var task = form.querySelector("[name=task]"), plot = document.getElementById("plot-settings");
    var adhoc = document.getElementById("adhoc-settings"), order = document.getElementById("order-settings");
    var collection = form.querySelector("[name=collection]"), picked = form.querySelector("[name=topics]");
    var search = document.getElementById("topic-search"), filter = document.getElementById("topic-filter");
    function source() { var c = form.querySelector("[name=topics_from]:checked"); return c ? c.value : "all"; }
    function update() {
      if (plot && task) plot.hidden = task.value !== "plot";
      if (adhoc && task) adhoc.hidden = task.value !== "adhoc";
      if (order && task) order.hidden = task.value === "outline";
      var file = document.getElementById("field-topic_file"), pick = document.getElementById("field-topics");
      if (file) file.hidden = source() !== "file";
      if (pick) pick.hidden = source() !== "pick";
      if (search) search.hidden = source() !== "pick";
      applyFilter();
    }
    var SHOWN = 200;  // topics listed at once (the rest are a search away)
    function chosen() { return (picked.value || "").split(/[\s,]+/).filter(Boolean); }
    function applyFilter() {
      if (!search) return;
      var words = (filter.value || "").toLowerCase().split(/\s+/).filter(Boolean), shown = 0;
      var ids = chosen(), coll = collection ? collection.value.trim() : "";
      each("li", function (li) {
        var box = li.querySelector("input");
        box.checked = ids.indexOf(box.value) >= 0;
        var match = words.every(function (w) { return li.dataset.text.indexOf(w) >= 0; })
          && (!coll || li.dataset.collection === coll);
        li.hidden = !match || shown >= SHOWN;
        if (match) shown += 1;
      }, search);
      var count = document.getElementById("topic-count");  // never a silent cut: say how many match and are shown
      if (count) count.textContent = shown > SHOWN
        ? "Showing the first " + SHOWN + " of " + shown + " matching topics: type words of a title or an id to narrow."
        : shown + " matching topic" + (shown === 1 ? "" : "s") + ".";
    }
    if (search) {
      search.addEventListener("change", function (event) {
        var box = event.target, ids = chosen();
        if (!box.matches("input[type=checkbox]")) return;
        var at = ids.indexOf(box.value);
        if (box.checked && at < 0) ids.push(box.value);
        if (!box.checked && at >= 0) ids.splice(at, 1);
        picked.value = ids.join("\n");
      });
      filter.addEventListener("input", applyFilter);
      picked.addEventListener("input", applyFilter);
    }
    each(".pick-collection", function (button) {
      button.addEventListener("click", function () { collection.value = button.dataset.name; applyFilter(); collection.focus(); });
    });
    form.addEventListener("change", function (event) { if (event.target.name === "task" || event.target.name === "topics_from") update(); });
    if (collection) collection.addEventListener("input", applyFilter);
    update();
  }

  function uploadForm(form) {
    var kind = form.querySelector("[name=kind]");
    function update() {
      each(".kind-options", function (box) { box.hidden = box.dataset.kinds.split(" ").indexOf(kind.value) < 0; }, form);
    }
    kind.addEventListener("change", update);
    update();
  }

  var campaign = document.getElementById("campaign-form");
  if (campaign) campaignForm(campaign);
  var upload = document.getElementById("upload-form");
  if (upload) uploadForm(upload);
  var allRuns = document.getElementById("all-runs");
  if (allRuns) allRuns.addEventListener("click", function () { each("#pool-form [name=runs]", function (b) { b.checked = true; }); });
  var focus = document.getElementById("problems") || document.getElementById("shown-once") || document.getElementById("pool-preview");
  if (focus) focus.focus();
  document.body.dataset.ready = "console";
})();
