// The queue page: N (or Enter) opens the next assignment.
(function () {
  "use strict";
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var t = event.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable)) return;
    if (event.key === "N" || event.key === "n") {
      var link = document.getElementById("next-link");
      if (link) { event.preventDefault(); window.location.href = link.href; }
    }
  });
  document.body.dataset.ready = "home";
})();
