#!/usr/bin/env bash
# Installs flatcheck's build and test dependencies from Debian packages.
# Used by the README's quick start and by .ci/run. Needs root (or sudo).
#   --torch   also Debian's python3-torch, for the PyTorch bridge and `ctest -L torch`
#             (docs/torch.md; without it those tests report SKIPPED with the reason), and
#             debootstrap, which scripts/torch-root.sh builds the torch 2.x roots with.
set -euo pipefail
pkgs=(build-essential cmake ninja-build clang nlohmann-json3-dev librapidcheck-dev libgtest-dev
      libbenchmark-dev libmimalloc-dev python3 python3-jsonschema python3-yaml zip)
for arg in "$@"; do
  case "$arg" in
    --torch) pkgs+=(python3-torch debootstrap) ;;  # debootstrap: scripts/torch-root.sh
    *) echo "install-deps: unknown option '$arg' (known: --torch)" >&2; exit 2 ;;
  esac
done
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
