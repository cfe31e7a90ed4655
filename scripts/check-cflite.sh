#!/usr/bin/env bash
# Checks the ClusterFuzzLite setup without GitHub: the workflow files parse and name the
# documented actions and modes, and .clusterfuzzlite/build.sh builds every libFuzzer target
# with the environment OSS-Fuzz's base-builder sets (CC CXX CFLAGS CXXFLAGS LIB_FUZZING_ENGINE
# OUT SRC), after which each target runs briefly over its seed corpus. Needs clang, zip and
# python3-yaml. Run by .ci/run; docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - <<'PY'
import yaml
want = {"cflite_pr.yml": {"code-change"}, "cflite_batch.yml": {"batch"},
        "cflite_cron.yml": {"prune", "coverage"}}
for name, modes in want.items():
    wf = yaml.safe_load(open(f".github/workflows/{name}"))
    steps = [s for job in wf["jobs"].values() for s in job["steps"]]
    uses = [s.get("uses", "") for s in steps]
    assert any(u.startswith("google/clusterfuzzlite/actions/build_fuzzers@") for u in uses), name
    assert any(u.startswith("google/clusterfuzzlite/actions/run_fuzzers@") for u in uses), name
    got = {s["with"]["mode"] for s in steps if "run_fuzzers" in s.get("uses", "")}
    assert got == modes, f"{name}: modes {got}, want {modes}"
    for s in steps:
        if "build_fuzzers" in s.get("uses", ""):
            assert s["with"]["language"] == "c++", name
    print(f"check-cflite: {name} parses; modes {sorted(got)}")
assert yaml.safe_load(open(".clusterfuzzlite/project.yaml"))["language"] == "c++"
PY
SRC=$(mktemp -d)
OUT=$(mktemp -d)
trap 'rm -rf "$SRC" "$OUT"' EXIT
mkdir "$SRC/flatcheck"
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$SRC/flatcheck"
cp .clusterfuzzlite/build.sh "$SRC/build.sh"
flags="-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
(cd "$SRC/flatcheck" && env SRC="$SRC" OUT="$OUT" CC=clang CXX=clang++ CFLAGS="$flags" \
  CXXFLAGS="$flags" LIB_FUZZING_ENGINE=-fsanitize=fuzzer bash "$SRC/build.sh")
for t in pipeline loader structure; do
  for f in "${t}_fuzzer" "${t}_fuzzer_seed_corpus.zip"; do
    [ -s "$OUT/$f" ] || { echo "check-cflite: $OUT/$f missing" >&2; exit 1; }
  done
  mkdir -p "$OUT/seeds-$t"
  (cd "$OUT/seeds-$t" && python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall()" "$OUT/${t}_fuzzer_seed_corpus.zip")
  "$OUT/${t}_fuzzer" -runs=300 -seed=1 "$OUT/seeds-$t" > "$OUT/$t.log" 2>&1 ||
    { tail -20 "$OUT/$t.log"; echo "check-cflite: ${t}_fuzzer failed" >&2; exit 1; }
  echo "check-cflite: ${t}_fuzzer built and ran 300 inputs ($(grep -c . "$OUT/$t.log") log lines)"
done
[ -s "$OUT/loader_fuzzer.dict" ] || { echo "check-cflite: loader_fuzzer.dict missing" >&2; exit 1; }
echo "check-cflite: ok"
