#!/bin/bash -eu
# ClusterFuzzLite's build script (its documented layout: .clusterfuzzlite/build.sh, copied to
# $SRC/build.sh by the Dockerfile). The build itself is harness/fuzz/oss-fuzz-build.sh.
exec bash "${SRC}/flatcheck/harness/fuzz/oss-fuzz-build.sh"
