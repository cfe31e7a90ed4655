#!/usr/bin/env bash
# Installs flatcheck's build and test dependencies from Debian packages.
# Used by the README's quick start and by .ci/run. Needs root (or sudo).
set -euo pipefail
pkgs=(build-essential cmake ninja-build clang nlohmann-json3-dev librapidcheck-dev libgtest-dev
      libbenchmark-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
