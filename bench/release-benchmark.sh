#!/usr/bin/env bash
# A Release build of Google Benchmark for the stage table. Debian's libbenchmark-dev 1.7.1 is
# built as DEBUG (its JSON says `"library_build_type": "debug"`), so this script downloads the
# same upstream release from Debian's source pool, checks its SHA-256, builds it as Release
# into BUILD/gbench, and builds flatcheck and flatcheck_bench against it in BUILD (clang,
# Release, as scripts/build.sh does). Then: BUILD=build-bench bash bench/run.sh
#   BUILD=build-bench  FLATCHECK_JOBS=2
# Needs curl, cmake and a C++ compiler; nothing here is run by CI or the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-bench}
VERSION=1.7.1
SHA256=6430e4092653380d9dc4ccb45a1e2dc9259d581f4866dc0759713126056bc1d7
TARBALL=benchmark_${VERSION}.orig.tar.gz
URL=http://deb.debian.org/debian/pool/main/b/benchmark/$TARBALL
have=$(dpkg-query -W -f='${Version}' libbenchmark-dev 2>/dev/null || true)
case "$have" in
  "$VERSION"-*) ;;
  *) echo "bench/release-benchmark.sh: libbenchmark-dev is '${have:-not installed}'; this script" \
       "builds $VERSION, the version the table's headers must match" >&2
     exit 2 ;;
esac
mkdir -p "$BUILD/gbench-src"
src="$BUILD/gbench-src"
if [ ! -f "$src/$TARBALL" ]; then
  curl -fsS -o "$src/$TARBALL.part" "$URL" ||
    { echo "bench/release-benchmark.sh: cannot download $URL" >&2; exit 2; }
  mv "$src/$TARBALL.part" "$src/$TARBALL"
fi
if ! echo "$SHA256  $src/$TARBALL" | sha256sum -c --quiet -; then
  echo "bench/release-benchmark.sh: $src/$TARBALL does not have the expected SHA-256" >&2
  rm -f "$src/$TARBALL"
  exit 2
fi
rm -rf "$src/benchmark-$VERSION"
tar -xzf "$src/$TARBALL" -C "$src"
gen=()
command -v ninja > /dev/null 2>&1 && gen=(-G Ninja)
if [ -z "${CXX:-}" ] && command -v clang++ > /dev/null 2>&1; then
  export CC=clang CXX=clang++
fi
cmake -S "$src/benchmark-$VERSION" -B "$BUILD/gbench-build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DBENCHMARK_ENABLE_TESTING=OFF -DBENCHMARK_ENABLE_GTEST_TESTS=OFF -DBENCHMARK_ENABLE_WERROR=OFF \
  -DBENCHMARK_INSTALL_DOCS=OFF -DCMAKE_INSTALL_PREFIX="$PWD/$BUILD/gbench" > /dev/null
cmake --build "$BUILD/gbench-build" -j"${FLATCHECK_JOBS:-2}" > /dev/null
cmake --install "$BUILD/gbench-build" > /dev/null
echo "$VERSION (Debian's source $TARBALL, built Release by bench/release-benchmark.sh)" \
  > "$BUILD/gbench/VERSION"
cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DFLATCHECK_FUZZERS=OFF \
  -Dbenchmark_DIR="$PWD/$BUILD/gbench/lib/cmake/benchmark" > /dev/null
cmake --build "$BUILD" -j"${FLATCHECK_JOBS:-2}" --target flatcheck flatcheck_bench
echo "bench/release-benchmark.sh: $BUILD/bin/flatcheck_bench links Google Benchmark $VERSION (Release);"
echo "  run BUILD=$BUILD bash bench/run.sh"
