#!/usr/bin/env bash
# Builds a Debian trixie root holding python3-torch 2.6 (torch.export, unflatten's call variants)
# beside the host, without changing the host's packages (docs/torch.md). Built once and re-used;
# rebuilt when this recipe changes. Run commands in it with scripts/in-torch-root.
#
#   bash scripts/torch-root.sh            # build (or re-use) build/torch-root
#   bash scripts/torch-root.sh --print    # print the root's path and torch version, build nothing
#
#   FLATCHECK_TORCH_ROOT=DIR   where the root lives (default: build/torch-root in the checkout)
#   FLATCHECK_TORCH_MIRROR=URL the Debian mirror (default: the one the host's apt uses)
#   FLATCHECK_TORCH_SUITE=S    the Debian suite (default trixie: torch 2.6); sid holds the newest
#                              torch Debian packages (2.14.1 on 2026-11-26), e.g.
#                              FLATCHECK_TORCH_SUITE=sid FLATCHECK_TORCH_ROOT=build/torch-root-sid
#
# Needs root (debootstrap creates device nodes and owns files as root; chroot needs it):
# without it this says so and exits 2. Exit 3 when the mirror or debootstrap fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
root="${FLATCHECK_TORCH_ROOT:-$repo/build/torch-root}"
suite="${FLATCHECK_TORCH_SUITE:-trixie}"
case "$suite" in
  *[!a-z]* | "") echo "torch-root: FLATCHECK_TORCH_SUITE must be a Debian suite name, not '$suite'" >&2
                 exit 2 ;;
esac
# g++, libtorch-dev (torch's C++ headers) and python3-setuptools (torch 2.6's C++ extension
# loader imports it): what Inductor needs to compile its CPU kernels (compile.inductor);
# pybind11-dev: what its C++ wrapper includes (compile.inductor.cpp_wrapper); libsleef-dev:
# sleef.h, which torch's vector types include: without it Inductor finds no vector ISA it can
# build and writes only scalar kernels (compile.inductor.scalar is then the same as the others).
packages=(python3-torch python3-numpy g++ libtorch-dev python3-setuptools pybind11-dev
          libsleef-dev)

# The recipe: what a root built by this script depends on. A change to any of it rebuilds.
recipe="suite=$suite packages=${packages[*]} variant=minbase script=$(sha256sum "$0" | cut -c1-16)"

torch_version() {
  "$here/in-torch-root" python3 -c 'import torch; print(torch.__version__)' 2>/dev/null
}

if [ "${1:-}" = "--print" ]; then
  if [ -f "$root/.flatcheck-recipe" ]; then
    echo "$root torch $(torch_version || echo '(torch does not import)')"
    exit 0
  fi
  echo "torch-root: no root at $root (build it: bash scripts/torch-root.sh)" >&2
  exit 1
elif [ $# -gt 0 ]; then
  echo "torch-root: unknown option '$1' (known: --print)" >&2
  exit 2
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "torch-root: building the $suite root needs root (debootstrap and chroot); run it as root" \
       "or with sudo. The host's packages are never changed." >&2
  exit 2
fi
if [ -f "$root/.flatcheck-recipe" ] && [ "$(cat "$root/.flatcheck-recipe")" = "$recipe" ]; then
  echo "torch-root: $root is up to date (torch $(torch_version || echo '?'))"
  exit 0
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  echo "torch-root: installing debootstrap (a host tool; no $suite package touches the host)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
         apt-get install -y -qq --no-install-recommends debootstrap; }
fi

# The mirror the host's apt is configured with: deb822 sources first, then sources.list.
mirror="${FLATCHECK_TORCH_MIRROR:-}"
if [ -z "$mirror" ]; then
  mirror=$(grep -h -m1 -E '^URIs:.*debian/?$' /etc/apt/sources.list.d/*.sources 2>/dev/null \
           | awk '{print $2}' | head -n1 || true)
fi
if [ -z "$mirror" ]; then
  mirror=$(grep -h -m1 -E '^deb .*debian/? ' /etc/apt/sources.list 2>/dev/null \
           | awk '{print $2}' | head -n1 || true)
fi
mirror="${mirror:-http://deb.debian.org/debian}"

# sid's Release file can be past its Valid-Until on a mirror that is a dated snapshot (seen
# here: 20 days); apt then refuses it. For a suite other than the default, its age is accepted.
apt_opts=""
if [ "$suite" != trixie ]; then apt_opts="-o Acquire::Check-Valid-Until=false"; fi

start=$(date +%s)
staging="$root.partial"
cleanup() {
  umount -l "$staging/proc" 2>/dev/null || true
}
trap cleanup EXIT
rm -rf "$staging"
mkdir -p "$(dirname "$root")"
echo "torch-root: debootstrap --variant=minbase $suite from $mirror into $staging"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
if ! debootstrap --variant=minbase --keyring="$keyring" "$suite" "$staging" "$mirror" \
     >"$staging.log" 2>&1; then
  tail -n 20 "$staging.log" >&2
  echo "torch-root: debootstrap failed (full log: $staging.log)" >&2
  exit 3
fi
mount -t proc proc "$staging/proc"
cp /etc/resolv.conf "$staging/etc/resolv.conf" 2>/dev/null || true
echo "torch-root: apt-get install ${packages[*]} inside the root"
if ! chroot "$staging" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
       DEBIAN_FRONTEND=noninteractive sh -c \
       "apt-get update -qq $apt_opts && apt-get install -y -qq --no-install-recommends ${packages[*]} && \
        apt-get clean" >>"$staging.log" 2>&1; then
  tail -n 20 "$staging.log" >&2
  echo "torch-root: installing ${packages[*]} in the root failed (log: $staging.log)" >&2
  exit 3
fi
# A process the install started may still hold /proc for a moment ("target is busy"): detached
# then, and gone with that process.
umount "$staging/proc" 2>/dev/null || umount -l "$staging/proc"
echo "$recipe" >"$staging/.flatcheck-recipe"
rm -rf "$root"
mv "$staging" "$root"
rm -f "$staging.log"
trap - EXIT
echo "torch-root: $root ready in $(( $(date +%s) - start )) s: torch $(torch_version || echo '?')," \
     "$(du -sh "$root" | cut -f1)"
