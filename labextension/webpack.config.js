// Merged by @jupyterlab/builder into its webpack configuration (package.json,
// jupyterlab.webpackConfig). Module ids in order of use, not webpack's production default
// ("deterministic"), which hashes each module's identifier: the module-federation
// container's identifier holds the absolute path of lib/index.js, so the same source built
// in two checkouts gave two different files (tests/test_labextension_build.py).
module.exports = {
  optimization: {
    moduleIds: 'natural'
  }
};
