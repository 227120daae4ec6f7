greet() { printf 'hello, %s' "$1"; }
