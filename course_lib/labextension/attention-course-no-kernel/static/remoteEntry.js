// A JupyterLab federated extension written by hand (no build step, no dependencies): the
// module container JupyterLab loads (window._JUPYTERLAB[name] with get/init), whose
// ./extension module is one plugin.
//
// JupyterLab starts a notebook's kernel as soon as it has read the file, whatever the
// notebook holds: the course's contents page, Markdown only, cost a Python process in
// JupyterLab and a Pyodide in the offline site. This plugin adds a widget extension to
// every notebook: once the file is read (context.ready, which resolves before the
// notebook's SessionContext asks the server which sessions run and decides whether to start
// one), a notebook without a code cell gets kernelPreference.shouldStart = false, so no
// kernel starts and no "Select Kernel" dialog comes up; the status bar says "No Kernel".
// A student who adds code there picks a kernel when they run it (or with Kernel > Change
// Kernel), as for any notebook without one. (The same rule, in Python, keeps the site from
// starting Pyodide early for such a page: course_site.lessons.LessonNeeds.kernel.)
var _JUPYTERLAB;
(function () {
  "use strict";
  var NAME = "attention-course-no-kernel";

  function hasCode(model) {
    var cells = model && model.sharedModel ? model.sharedModel.cells : null;
    if (!cells) return true; // a model we do not know: leave JupyterLab's choice alone
    for (var i = 0; i < cells.length; i++) {
      if (cells[i].cell_type === "code") return true;
    }
    return false;
  }

  var plugin = {
    id: NAME + ":markdown-only",
    description: "A notebook with no code cell opens without a kernel.",
    autoStart: true,
    activate: function (app) {
      app.docRegistry.addWidgetExtension("Notebook", {
        createNew: function (panel, context) {
          context.ready.then(function () {
            var session = context.sessionContext;
            if (context.isDisposed || session.session || hasCode(context.model)) return;
            session.kernelPreference = Object.assign({}, session.kernelPreference,
                                                     { shouldStart: false });
          });
        },
      });
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
