// course_site.service_worker: the site's own files are not fetched again through this
// service worker. JupyterLite's handler below answers every GET that is not for /api/ with
// fetch(request) (its cache is off): on every visit each file of the site, 40 MB of Pyodide
// among them, went through this worker's thread once more. Such a request now leaves this
// worker unanswered, so the browser fetches it itself, from its cache when it can. The
// handler still gets what it is here for: the kernel's reads of the files (/api/drive),
// input() (/api/stdin/) and its heartbeat.
self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method === "GET" && !url.pathname.includes("/api/")) {
    event.stopImmediatePropagation();
  }
});
