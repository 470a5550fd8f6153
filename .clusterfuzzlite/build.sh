#!/bin/bash -eu
# ClusterFuzzLite runs $SRC/build.sh; the build is the OSS-Fuzz one, kept
# in one place (fuzz/oss-fuzz/build.sh), checked locally by
# fuzz/oss-fuzz/check.sh.
exec "$SRC/mediaslice/fuzz/oss-fuzz/build.sh"
