# validate_cmd with its own message, a shell checker printing to both streams.
validate_cmd("content\n", 'echo "lang=$LANG home=$HOME"; cat % >&2; exit 3', 'Checker said no')
