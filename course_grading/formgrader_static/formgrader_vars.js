// Page values that nbgrader's formgrader templates set in inline scripts. Under the course's
// Content-Security-Policy no inline script runs, so the templates (rewritten by
// course_grading/formgrader_csp.py) hand the values to this file in data- attributes.
(function () {
  "use strict";
  var script = document.currentScript;
  var names = (script.getAttribute("data-vars") || "").split(" ");
  names.forEach(function (name) {
    if (/^[a-z_]+$/.test(name)) {
      window[name] = script.getAttribute("data-" + name) || "";
    }
  });
})();
