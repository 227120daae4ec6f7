#!/bin/sh
# Uses a helper from the module's files, found through _installdir.
. "$PT__installdir/demo/files/lib/helper.sh"
# demo/lib/blob.bin is binary (a NUL byte), so it cannot pass through a shell word.
printf '{"greeting": "%s", "extra": "%s", "blob": "%s", "installdir": "%s"}\n' "$(greet "$PT_name")" "$(cat "$PT__installdir/demo/lib/extra.txt")" "$(od -An -c "$PT__installdir/demo/lib/blob.bin" | tr -s ' \n' ' ' | tr -d '\\')" "$PT__installdir"
