// Live pages: an element with data-live="URL" listens to the server-sent
// events at URL and, on each, reloads its own part of the page (the element
// with the same id in a fresh copy of the page). Nothing else needs script.
(function () {
  "use strict";
  function follow(el) {
    var src = new EventSource(el.getAttribute("data-live"));
    var busy = false;
    src.addEventListener("turn", function () {
      if (busy) { return; }
      busy = true;
      fetch(location.href, { credentials: "same-origin" }).then(function (r) {
        return r.ok ? r.text() : null;
      }).then(function (html) {
        busy = false;
        if (!html) { return; }
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById(el.id);
        if (fresh) {
          el.replaceWith(fresh);
          src.close();
          follow(fresh);
          document.dispatchEvent(new CustomEvent("troupe:updated", { detail: el.id }));
        }
      }).catch(function () { busy = false; });
    });
  }
  function start() {
    var els = document.querySelectorAll("[data-live]");
    for (var i = 0; i < els.length; i++) { if (els[i].id) { follow(els[i]); } }
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
