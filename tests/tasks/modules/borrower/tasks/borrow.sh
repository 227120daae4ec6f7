#!/bin/sh
# Lists the files the install dir holds, relative to it, and reads one.
d=$PT__installdir
. "$d/lender/files/common.sh"
files=$(cd "$d" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ')
printf '{"value": "%s", "files": "%s"}\n' "$lender_value" "$files"
