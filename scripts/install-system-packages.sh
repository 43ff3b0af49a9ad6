#!/usr/bin/env bash
# System (Debian/Ubuntu) packages that some tests need besides Python and pip.
# The README shows this command; .ci/run runs it on a fresh machine. It needs root (or sudo).
# Tests that need a package missing here skip with a message naming this script.
set -euo pipefail
packages=(
  make
  bubblewrap  # tests/sandbox: the autograding sandbox (course_lib.grading.sandbox)
  # tests/browser: JupyterLab in a real browser. Debian's Chromium only; never a downloaded one.
  chromium
  fonts-dejavu-core
)
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then exec sudo "$0" "$@"; fi
  echo "install-system-packages.sh: run as root (or install: ${packages[*]})" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${packages[@]}"
