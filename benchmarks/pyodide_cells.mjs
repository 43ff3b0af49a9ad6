// Where a lesson's time goes in the offline site: each code cell of the lesson, in order, in
// the site's own Pyodide under Node.js (no browser), timed by Node.js's CPU time
// (process.cpuUsage(): every thread of the process, V8's compiler threads too) and wall time.
//
//   ./course site
//   node benchmarks/pyodide_cells.mjs _site/static/pyodide notebooks/13_training.ipynb
//
// Prints the time to load Pyodide and the lesson's packages, the cells' total CPU and the 8
// costliest cells. Cells that hold an exercise's `raise NotImplementedError` are left out
// (and the check after each then fails: its error is printed and counted). Figures are
// drawn with matplotlib's Agg backend and display() shows nothing. Nothing is fetched: a
// package missing from the folder stops the run (as course_site/pyodide_run.mjs does).
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [folder, lesson] = process.argv.slice(2);
const t0 = performance.now(), c0 = process.cpuUsage();
const { loadPyodide } = await import(pathToFileURL(`${folder}/pyodide.mjs`).href);
const pyodide = await loadPyodide({ indexURL: `${folder}/`, stdout: () => {}, stderr: (t) => process.stderr.write(t + "\n") });
const refuseCdn = (message) => {
  if (/cdn|attempting to load from/i.test(message)) {
    process.stderr.write(`pyodide_cells: refused: ${message}\n`);
    process.exit(3);
  }
};
await pyodide.loadPackage(
  ["numpy", "matplotlib", "course_lib", "ipython", "ipywidgets", "matplotlib_inline"],
  { checkIntegrity: true, messageCallback: refuseCdn });
const c1 = process.cpuUsage(c0);
process.stderr.write(`load: ${((performance.now() - t0) / 1000).toFixed(1)} s wall, ${((c1.user + c1.system) / 1e6).toFixed(1)} s CPU\n`);
const nb = JSON.parse(readFileSync(lesson, "utf8"));
pyodide.runPython(`import matplotlib; matplotlib.use("agg")
import IPython.display as _d
_d.display = lambda *a, **k: None
import builtins; builtins.display = _d.display
import os; os.chdir("/home/pyodide")`);
let total = 0;
const rows = [];
for (const [i, cell] of nb.cells.entries()) {
  if (cell.cell_type !== "code") continue;
  const src = (Array.isArray(cell.source) ? cell.source.join("") : cell.source);
  if (src.includes("NotImplementedError")) { continue; }
  const w = performance.now(), c = process.cpuUsage();
  try { await pyodide.runPythonAsync(src); } catch (e) { process.stderr.write(`cell ${i}: ${String(e).slice(-300)}\n`); }
  const d = process.cpuUsage(c), cpu = (d.user + d.system) / 1e6, wall = (performance.now() - w) / 1000;
  total += cpu; rows.push([i, cpu, wall]);
}
rows.sort((a, b) => b[1] - a[1]);
console.log(`${lesson}: cells CPU ${total.toFixed(2)} s`);
for (const [i, cpu, wall] of rows.slice(0, 8)) console.log(`  cell ${i}: CPU ${cpu.toFixed(2)} s, wall ${wall.toFixed(2)} s`);
