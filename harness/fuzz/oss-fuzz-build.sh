#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build: uses $CC, $CXX, $CXXFLAGS, $LIB_FUZZING_ENGINE, $SRC, $OUT.
cd "${SRC}/flatcheck"
cmake -S . -B build-oss-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="${CC}" -DCMAKE_CXX_COMPILER="${CXX}" -DCMAKE_CXX_FLAGS="${CXXFLAGS}" \
  -DFLATCHECK_FUZZERS=ON -DFLATCHECK_FUZZ_ENGINE="${LIB_FUZZING_ENGINE}" \
  -DFLATCHECK_TESTS=OFF -DFLATCHECK_BENCH=OFF -DFLATCHECK_CUDA=OFF
cmake --build build-oss-fuzz --target pipeline_fuzzer loader_fuzzer structure_fuzzer
for t in pipeline loader structure; do
  cp "build-oss-fuzz/bin/${t}_fuzzer" "${OUT}/"
  (cd "corpus/fuzz-seeds/${t}" && zip -q -r "${OUT}/${t}_fuzzer_seed_corpus.zip" .)
done
cp harness/fuzz/loader.dict "${OUT}/loader_fuzzer.dict"
cp harness/fuzz/loader.dict "${OUT}/structure_fuzzer.dict"
