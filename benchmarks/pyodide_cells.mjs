// Where a lesson's time goes in the offline site: each code cell of the lesson, in order, in
// the site's own Pyodide under Node.js (no browser), timed by Node.js's CPU time
// (process.cpuUsage(): every thread of the process, V8's compiler threads too) and wall time.
//
//   ./course site
//   node benchmarks/pyodide_cells.mjs _site/static/pyodide notebooks/13_training.ipynb [--repeat 3]
//
// As the site's kernel does: Pyodide loads the packages the site's jupyter-lite.json preloads
// (its compiled bytecode among them) and imports what the kernel imports as it starts (timed
// apart: "kernel start"); then every code cell runs in order, and what a cell displays (its
// last expression, and every display() call) is formatted as the page would receive it
// (IPython's DisplayFormatter: a figure is drawn into its SVG). Prints the kernel start, the
// cells' total CPU, the costliest cells and every module compiled from source during the
// cells (the site ships bytecode: none should be). With --repeat N the lesson runs N times,
// each in a new Pyodide, and the medians are printed. Cells that hold an exercise's
// `raise NotImplementedError` are left out (and the check after each then fails: its error
// is printed and counted). Nothing is fetched: a package missing from the folder stops the
// run (as course_site/pyodide_run.mjs does).
import { existsSync, readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const args = process.argv.slice(2);
const repeatAt = args.indexOf("--repeat");
const repeat = repeatAt >= 0 ? Number(args.splice(repeatAt, 2)[1]) : 1;
const [folder, lesson] = args;
if (!folder || !lesson || !(repeat >= 1)) {
  process.stderr.write("usage: node benchmarks/pyodide_cells.mjs PYODIDE_FOLDER LESSON.ipynb [--repeat N]\n");
  process.exit(2);
}
const refuseCdn = (message) => {
  if (/cdn|attempting to load from/i.test(message)) {
    process.stderr.write(`pyodide_cells: refused: ${message}\n`);
    process.exit(3);
  }
};
// What the site's kernel loads as it starts (jupyter-lite.json, two folders up), and the
// packages the lessons import (their dependencies come along).
const config = path.join(folder, "..", "..", "jupyter-lite.json");
let preload = [];
if (existsSync(config)) {
  const settings = JSON.parse(readFileSync(config, "utf8"))["jupyter-config-data"]
    .litePluginSettings?.["@jupyterlite/pyodide-kernel-extension:kernel"];
  preload = settings?.loadPyodideOptions?.packages ?? [];
}
const packages = [...new Set([...preload, "numpy", "matplotlib", "course_lib", "ipython",
  "ipywidgets", "matplotlib_inline"])];
const nb = JSON.parse(readFileSync(lesson, "utf8"));
const cells = nb.cells.map((cell, i) => [i, cell]).filter(([, cell]) => cell.cell_type === "code")
  .map(([i, cell]) => [i, Array.isArray(cell.source) ? cell.source.join("") : cell.source])
  .filter(([, src]) => !src.includes("NotImplementedError"));

const cpu = (c) => { const d = process.cpuUsage(c); return (d.user + d.system) / 1e6; };
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

async function once() {
  const t0 = performance.now(), c0 = process.cpuUsage();
  const { loadPyodide } = await import(pathToFileURL(`${folder}/pyodide.mjs`).href);
  const pyodide = await loadPyodide({ indexURL: `${folder}/`, stdout: () => {}, stderr: (t) => process.stderr.write(t + "\n") });
  await pyodide.loadPackage(packages, { checkIntegrity: true, messageCallback: refuseCdn });
  const load = cpu(c0), loadWall = (performance.now() - t0) / 1000;
  const c1 = process.cpuUsage();
  // what the kernel imports as it starts (course_site.bytecode imports the same)
  pyodide.runPython(`import piplite.piplite, pyodide_kernel
import builtins, os, sys
sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
os.chdir("/home/pyodide")`);
  const start = cpu(c1);
  pyodide.runPython(`
import ast
from IPython.core.formatters import DisplayFormatter
from pyodide.code import eval_code_async
_format = DisplayFormatter().format
_shown = []
def display(*objs, **kwargs):
    for obj in objs:
        _shown.append(_format(obj))
import IPython.display as _d
_d.display = builtins.display = display
_compiled = []
_compile = builtins.compile
def _watch(source, filename, mode, *args, **kwargs):
    if mode == "exec" and str(filename).endswith(".py"):
        _compiled.append(str(filename))
    return _compile(source, filename, mode, *args, **kwargs)
builtins.compile = _watch
_namespace = {"__name__": "__main__", "display": display}
async def _run_cell(source):
    result = await eval_code_async(source, _namespace, return_mode="last_expr")
    if result is not None:
        _shown.append(_format(result))
`);
  const run = pyodide.globals.get("_run_cell");
  const rows = [];
  let total = 0, failed = 0;
  for (const [i, src] of cells) {
    const w = performance.now(), c = process.cpuUsage();
    try { await run(src); } catch (e) { failed += 1; process.stderr.write(`cell ${i}: ${String(e).slice(-300)}\n`); }
    const used = cpu(c), wall = (performance.now() - w) / 1000;
    total += used; rows.push([i, used, wall]);
  }
  const compiled = pyodide.globals.get("_compiled").toJs();
  return { load, loadWall, start, total, rows, failed, compiled };
}

const runs = [];
for (let r = 0; r < repeat; r += 1) runs.push(await once());
const per = new Map();
for (const run of runs) for (const [i, used, wall] of run.rows) {
  if (!per.has(i)) per.set(i, [[], []]);
  per.get(i)[0].push(used); per.get(i)[1].push(wall);
}
const of = (key) => median(runs.map((r) => r[key])).toFixed(2);
const label = repeat > 1 ? `medians of ${repeat} runs` : "one run";
console.log(`${lesson} (${label}): load ${of("loadWall")} s wall, ${of("load")} s CPU; kernel start ${of("start")} s CPU; cells CPU ${of("total")} s (${runs[0].rows.length} cells, ${runs[0].failed} failed)`);
const rows = [...per.entries()].map(([i, [c, w]]) => [i, median(c), median(w)]).sort((a, b) => b[1] - a[1]);
for (const [i, used, wall] of rows.slice(0, 8)) console.log(`  cell ${i}: CPU ${used.toFixed(2)} s, wall ${wall.toFixed(2)} s`);
const compiled = runs[0].compiled;
console.log(`  compiled from source during the cells: ${compiled.length ? compiled.join(", ") : "nothing"}`);
