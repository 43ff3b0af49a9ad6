// The Pyodide kernel's worker, started as the lesson's page opens (course_site.early_kernel).
//
// JupyterLab asks for a kernel only once it has loaded and opened the notebook; the kernel's
// worker then loads Pyodide and its packages, seconds of work the page could have done
// meanwhile on another core. This worker starts that loading at once, then runs the Pyodide
// kernel extension's own worker code. When that code asks for Pyodide with the same options
// it gets the instance already under way; with other options, or if the early start failed,
// it gets Pyodide's own loader, as without this file. The build fills in the three values.
const INDEX_URL = new URL(__INDEX_URL_FROM_HERE__, self.location.href).href;
const PACKAGES = __PACKAGES__;

const early = import(INDEX_URL + "pyodide.mjs").then(
  (module) => module.loadPyodide({ indexURL: INDEX_URL, packages: PACKAGES }));
early.catch(() => {});  // reported below, when the kernel asks for it

const sameOptions = (options) =>
  options !== null && typeof options === "object" &&
  Object.keys(options).sort().join() === "indexURL,packages" &&
  options.indexURL === INDEX_URL &&
  JSON.stringify(options.packages) === JSON.stringify(PACKAGES);

let ownLoader = null;  // Pyodide's loader, as pyodide.js sets it when the kernel imports it
let claimed = false;

function givePyodide(options) {
  if (!claimed && sameOptions(options)) {
    claimed = true;
    return early.then(
      (pyodide) => {
        console.info("course: the kernel took the Pyodide started as the page opened");
        return pyodide;
      },
      (error) => {
        console.warn(`course: Pyodide started as the page opened failed (${error}); ` +
                     "starting it again");
        return ownLoader(options);
      });
  }
  console.warn("course: the kernel asked for Pyodide with other options than the page " +
               "started it with; starting it again. Asked: " + JSON.stringify(options) +
               "; started: " + JSON.stringify({ indexURL: INDEX_URL, packages: PACKAGES }));
  return ownLoader(options);
}

// The kernel's code runs importScripts(pyodide.js), which assigns the global loadPyodide,
// then calls self.loadPyodide: keep what it assigns, hand out givePyodide. (The property
// stays configurable, as a global "var loadPyodide" needs; this file declares no global of
// that name, which would make it a fixed property: "Cannot redefine property".)
Object.defineProperty(self, "loadPyodide", {
  configurable: true,
  get: () => givePyodide,
  set: (value) => {
    if (typeof value === "function") ownLoader = value;
  },
});

importScripts(__KERNEL_WORKER__);
