#!/bin/sh
# mktree.sh LISTING DIR: makes the tree a fixture listing describes ("TYPE PATH [TARGET]" lines:
# d directory, f file, l symlink; '#' comments).
grep -v '^#' "$1" | while read -r type path target; do
	case $type in
	d) mkdir -p "$2$path" ;;
	f) echo "file $path" >"$2$path" ;;
	l) ln -s "$target" "$2$path" ;;
	esac
done
