#!/bin/sh
# SPDX-License-Identifier: MIT
# Every lock of libgpuspy is defined in src/preload/1-ground/locks.c, and every one
# defined there is on its list (the fork handlers take only what the list
# names).  Usage: check_locks.sh SRC_PRELOAD_DIR
set -eu
dir=$1
status=0

# (the stages are folders of it: every source below it)
locks=$(find "$dir" -name locks.c)
# The snapshot thread's wake-up is a semaphore, posted, never held: wake.[ch].
outside=$(find "$dir" -name '*.[ch]' -exec grep -nE 'pthread_(mutex|rwlock|spinlock)_t|PTHREAD_(MUTEX|RWLOCK)_INITIALIZER|struct gs_mutex [a-z_]+( *\[[^]]*\])? *=|\bsem_t\b' /dev/null {} + |
	grep -vE '^[^:]*/locks\.[ch]:' |
	grep -vE '/wake\.[ch]:[0-9]+:(extern )?sem_t gs_wake_sem;' || true)
if [ -n "$outside" ]; then
	echo "locks defined outside src/preload/1-ground/locks.c (add them to its list):"
	echo "$outside"
	status=1
fi

for name in $(sed -nE 's/^struct gs_mutex (gs_[a-z_]+).*=.*/\1/p' "$locks"); do
	if ! grep -qE "^[[:space:]]*\{ \"[a-z_]+\", &?$name," "$locks"; then
		echo "locks.c defines $name but its list does not name it"
		status=1
	fi
done
exit $status
