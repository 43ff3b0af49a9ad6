#!/usr/bin/env bash
# System (Debian/Ubuntu) packages that some tests need besides Python and pip.
# The README shows this command; .ci/run runs it on a fresh machine. It needs root (or sudo).
# Tests that need a package missing here skip with a message naming this script.
set -euo pipefail
packages=(
  make
  bubblewrap  # tests/sandbox: the autograding sandbox (course_grading.sandbox)
  # tests/browser: JupyterLab in a real browser. Debian's Chromium only; never a downloaded one.
  chromium
  fonts-dejavu-core
  # tests/hub (a class on JupyterHub): the multi-user venv is built from /usr/bin/python3,
  # users are made with useradd/chpasswd and run with runuser, the gradebook is also tried
  # on a real PostgreSQL server, and JupyterHub's proxy (configurable-http-proxy) is a
  # Node.js program from npm. tests/site (the offline site, ./course site): Node.js runs
  # the site's Pyodide once at build time and npm downloads Pyodide (chromium as above).
  python3
  python3-venv
  passwd
  util-linux
  postgresql
  nodejs
)
# JupyterHub's proxy, from npm. 4.6.x runs on Debian 12's Node.js 18 (5.x wants Node >= 22).
chp_version=4.6.3
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then exec sudo "$0" "$@"; fi
  echo "install-system-packages.sh: run as root (or install: ${packages[*]}," \
    "then: npm install -g configurable-http-proxy@${chp_version})" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# Debian's npm comes as its own package; a Node.js from elsewhere (e.g. NodeSource) ships its
# own npm and conflicts with Debian's, so ask for npm only when there is none.
if ! command -v npm >/dev/null; then packages+=(npm); fi
apt-get install -y -q --no-install-recommends "${packages[@]}"
if [ "$(configurable-http-proxy --version 2>/dev/null || true)" != "${chp_version}" ]; then
  npm install -g --no-fund --no-audit "configurable-http-proxy@${chp_version}"
fi
