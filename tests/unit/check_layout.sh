#!/bin/sh
# SPDX-License-Identifier: MIT
# The built-in subset of src/common/cuda_abi.h has NVIDIA's layouts: the
# lines of cuda_layout.c compiled against the real headers and against
# the subset are the same.  Usage: check_layout.sh REAL SUBSET
set -eu
real=$("$1")
subset=$("$2")
if [ "$real" = "$subset" ]; then
	echo "$(printf '%s\n' "$real" | wc -l) layout lines, the subset's the same as cuda.h's"
	exit 0
fi
echo "the subset differs from cuda.h (- cuda.h, + subset):"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '%s\n' "$real" >"$dir/cuda.h"
printf '%s\n' "$subset" >"$dir/subset"
diff -u "$dir/cuda.h" "$dir/subset" || true
exit 1
