// `npm run build:labextension`: @jupyterlab/builder turns lib/ into the prebuilt extension
// in package.json's jupyterlab.outputDir (../course_lib/labextension/attention-course-lab).
//
// The builder asks for "the core package directory": the package.json of the JupyterLab
// application the extension is built for, which says which packages the application shares
// (the extension uses those, never its own copy). `jupyter labextension build` takes it from
// the Python environment's jupyterlab; here it comes from @jupyterlab/core-meta, pinned in
// package-lock.json like the builder itself, so that the build depends on this folder alone
// and gives the same bytes on every machine (tests/test_labextension_build.py checks it).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const core = mkdtempSync(join(tmpdir(), 'jupyterlab-core-'));
try {
  copyFileSync(require.resolve('@jupyterlab/core-meta/core.package.json'),
               join(core, 'package.json'));
  const builder = require.resolve('@jupyterlab/builder/lib/build-labextension.js');
  const run = spawnSync(process.execPath, [builder, '--core-path', core, '.'],
                        { stdio: 'inherit' });
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(core, { recursive: true, force: true });
}
