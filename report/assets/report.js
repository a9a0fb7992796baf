// Hover a timeline bar to see its transaction's operations; click any transaction
// (a timeline bar, a node of a cycle, a row of a table) to mark it everywhere.
(function () {
  "use strict";
  var tip = document.getElementById("tip");
  function show(ev, g) {
    tip.textContent = g.getAttribute("data-name") + " (" + g.getAttribute("data-where") + "): " + g.getAttribute("data-ops");
    tip.hidden = false;
    tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - tip.offsetWidth - 8) + "px";
    tip.style.top = (ev.clientY + 14) + "px";
  }
  document.querySelectorAll(".bar").forEach(function (g) {
    g.addEventListener("mousemove", function (ev) { show(ev, g); });
    g.addEventListener("mouseleave", function () { tip.hidden = true; });
  });
  document.querySelectorAll("[data-txn]").forEach(function (el) {
    el.addEventListener("click", function () {
      var id = el.getAttribute("data-txn");
      var on = !el.classList.contains("marked");
      document.querySelectorAll(".marked").forEach(function (m) { m.classList.remove("marked"); });
      if (on) {
        document.querySelectorAll('[data-txn="' + id + '"]').forEach(function (m) { m.classList.add("marked"); });
      }
    });
  });
  // Tests (and people) can tell the script ran to the end.
  document.body.setAttribute("data-ready", "1");
})();
