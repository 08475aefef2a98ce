#!/bin/sh
# The shape of the tree (issue: "one tree along the data flow"):
#  - what runs inside the target (src/preload) and what reads its files
#    (src/read, src/cli) share no file name and no struct or enum name:
#    the same name with two layouts is how the two sides drifted before;
#  - what both sides must agree on lives once, in src/common: the host
#    part of a process directory's name is asked for only there.
# Usage: check_tree.sh SRC_DIR
src=${1:?usage: check_tree.sh SRC_DIR}
status=0

files=$(
	{ ls "$src/preload" | sort -u > "${TMPDIR:-/tmp}/gs_tree_p.$$"
	  ls "$src/read" "$src/cli" | sort -u > "${TMPDIR:-/tmp}/gs_tree_r.$$"
	  comm -12 "${TMPDIR:-/tmp}/gs_tree_p.$$" "${TMPDIR:-/tmp}/gs_tree_r.$$"; } |
	grep -v '^meson.build$')
if [ -n "$files" ]; then
	echo "file names on both sides: $files"
	status=1
fi

types() {
	grep -rhoE '^(struct|enum|union) [A-Za-z_][A-Za-z0-9_]* *\{' "$@" |
		sed -E 's/ *\{$//' | sort -u
}
types "$src/preload" > "${TMPDIR:-/tmp}/gs_tree_p.$$"
types "$src/read" "$src/cli" > "${TMPDIR:-/tmp}/gs_tree_r.$$"
both=$(comm -12 "${TMPDIR:-/tmp}/gs_tree_p.$$" "${TMPDIR:-/tmp}/gs_tree_r.$$")
if [ -n "$both" ]; then
	echo "types defined on both sides: $both"
	status=1
fi
rm -f "${TMPDIR:-/tmp}/gs_tree_p.$$" "${TMPDIR:-/tmp}/gs_tree_r.$$"

outside=$(grep -rln 'gethostname' "$src" | grep -v "^$src/common/")
if [ -n "$outside" ]; then
	echo "gethostname outside src/common: $outside"
	status=1
fi
[ $status -eq 0 ] && echo "tree: no name on both sides; the host name only in src/common"
exit $status
