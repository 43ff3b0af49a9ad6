// In the site's lab/index.html (course_site.early_kernel): when the address opens a notebook,
// start the kernel's worker (course-early-kernel.js) at once, and give it to the Pyodide
// kernel when it asks for its worker. A later kernel (a restart, a second notebook) gets a
// worker of the same kind, started when it asks; any other worker is made as before. A
// worker started early that no kernel asked for within 120 s is stopped. A notebook of
// Markdown only (KERNEL_FREE, listed by the build) opens without a kernel: nothing starts.
(function () {
  try {
    var path = new URLSearchParams(window.location.search).get("path") || "";
    var kernelWorker = new URL(__KERNEL_WORKER_FROM_PAGE__, window.location.href).href;
    var earlyWorker = new URL(__EARLY_WORKER_FROM_PAGE__, window.location.href).href;
    var KERNEL_FREE = __KERNEL_FREE__;
    var NativeWorker = window.Worker;
    // a cross-origin isolated page gets the extension's other worker (SharedArrayBuffer)
    var spare = /\.ipynb$/i.test(path) && KERNEL_FREE.indexOf(path) < 0
      && !window.crossOriginIsolated
      ? new NativeWorker(earlyWorker) : null;
    if (spare) {
      setTimeout(function () {
        if (spare) { spare.terminate(); spare = null; }
      }, 120000);
    }
    var Worker = function (url, options) {
      if (String(url).split(/[?#]/)[0] === kernelWorker) {
        var worker = spare || new NativeWorker(earlyWorker, options);
        spare = null;
        return worker;
      }
      return new NativeWorker(url, options);
    };
    Worker.prototype = NativeWorker.prototype;
    window.Worker = Worker;
  } catch (error) {
    console.warn("course: the kernel cannot start as the page opens: " + error);
  }
})();
