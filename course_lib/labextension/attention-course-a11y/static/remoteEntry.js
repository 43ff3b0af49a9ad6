// A JupyterLab federated extension written by hand (no build step, no dependencies): the
// module container JupyterLab loads (window._JUPYTERLAB[name] with get/init), whose
// ./extension module is one plugin.
//
// ipywidgets draws each slider with noUiSlider: the handle (role "slider") has no name and
// announces the option's index ("1100"), not the value the readout shows ("1.00"). The
// plugin watches the page and gives every widget slider's handle its label as aria-label
// and its readout as aria-valuetext, again whenever either changes.
var _JUPYTERLAB;
(function () {
  "use strict";
  var NAME = "attention-course-a11y";

  function nameSliders(root) {
    root.querySelectorAll(".widget-slider").forEach(function (slider) {
      var handle = slider.querySelector(".noUi-handle");
      if (!handle) return;
      var label = slider.querySelector(".widget-label");
      var readout = slider.querySelector(".widget-readout");
      var name = label ? label.textContent.trim() : "";
      var value = readout ? readout.textContent.trim() : "";
      if (name && handle.getAttribute("aria-label") !== name) {
        handle.setAttribute("aria-label", name);
      }
      if (value && handle.getAttribute("aria-valuetext") !== value) {
        handle.setAttribute("aria-valuetext", value);
      }
    });
  }

  var plugin = {
    id: NAME + ":slider-names",
    description: "Names ipywidgets' slider handles and says the value they stand for.",
    autoStart: true,
    activate: function () {
      var pending = false;
      var observer = new MutationObserver(function () {
        if (pending) return;
        pending = true;
        // after the slider's own update (noUiSlider first, then ipywidgets' readout)
        Promise.resolve().then(function () {
          pending = false;
          nameSliders(document);
        });
      });
      observer.observe(document.body, {
        subtree: true, childList: true, characterData: true,
        attributes: true, attributeFilter: ["aria-valuetext"],
      });
      nameSliders(document);
    },
  };

  var container = {
    get: function (module) {
      if (module !== "./extension") {
        return Promise.reject(new Error(NAME + ": no module " + module));
      }
      return Promise.resolve(function () {
        return { __esModule: true, default: [plugin] };
      });
    },
    init: function () {},
  };
  (_JUPYTERLAB = _JUPYTERLAB === undefined ? {} : _JUPYTERLAB)[NAME] = container;
})();
