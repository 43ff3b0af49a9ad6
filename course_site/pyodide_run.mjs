// Run Python in the site's own Pyodide under Node.js, from the site's files on disk.
//
//   node pyodide_run.mjs <pyodide folder> <packages, comma-separated> <python file>
//
// Loads the packages (with their dependencies) from the folder's pyodide-lock.json, runs the
// file and writes the value of its last expression (a string) to stdout. Pyodide under
// Node.js would fetch a package that is missing from the folder from its CDN; this script
// refuses that and exits with an error instead (the site must hold every file it needs).
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [folder, packages, script] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(`${folder}/pyodide.mjs`).href);
const log = (text) => process.stderr.write(`${text}\n`);
const pyodide = await loadPyodide({ indexURL: `${folder}/`, stdout: log, stderr: log });
const refuseCdn = (message) => {
  if (/cdn|attempting to load from/i.test(message)) {
    log(`pyodide_run: refused: ${message}`);
    process.exit(3);
  }
};
await pyodide.loadPackage(packages.split(",").filter(Boolean), {
  messageCallback: refuseCdn,
  errorCallback: (message) => { log(`pyodide_run: ${message}`); process.exit(4); },
  checkIntegrity: true,
});
const result = await pyodide.runPythonAsync(readFileSync(script, "utf8"));
process.stdout.write(String(result));
