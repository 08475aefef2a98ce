#!/bin/sh
# SPDX-License-Identifier: MIT
# Every lock of libgpuspy is defined in src/preload/locks.c, and every one
# defined there is on its list (the fork handlers take only what the list
# names).  Usage: check_locks.sh SRC_PRELOAD_DIR
set -eu
dir=$1
status=0

outside=$(grep -nE 'pthread_(mutex|rwlock|spinlock)_t|PTHREAD_(MUTEX|RWLOCK)_INITIALIZER|struct gs_mutex [a-z_]+( *\[[^]]*\])? *=|\bsem_t\b' \
	"$dir"/*.c "$dir"/*.h | grep -vE '^[^:]*/locks\.[ch]:' |
	grep -vE 'writer\.c:[0-9]+:static sem_t wake;' || true)
if [ -n "$outside" ]; then
	echo "locks defined outside src/preload/locks.c (add them to its list):"
	echo "$outside"
	status=1
fi

for name in $(sed -nE 's/^struct gs_mutex (gs_[a-z_]+).*=.*/\1/p' "$dir/locks.c"); do
	if ! grep -qE "^[[:space:]]*\{ \"[a-z_]+\", &?$name," "$dir/locks.c"; then
		echo "locks.c defines $name but its list does not name it"
		status=1
	fi
done
exit $status
