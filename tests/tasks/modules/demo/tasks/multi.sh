#!/bin/sh
# Uses a helper from the module's files, found through _installdir.
. "$PT__installdir/demo/files/lib/helper.sh"
printf '{"greeting": "%s", "extra": "%s", "installdir": "%s"}\n' "$(greet "$PT_name")" "$(cat "$PT__installdir/demo/lib/extra.txt")" "$PT__installdir"
