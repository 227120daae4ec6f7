# assert_type's lambda gets the expected type and the value's inferred type
# (systemd::udev::rule, archive::artifactory print them); a type in a string
# spells its aliases out, and Pattern regexps are written as Ruby's inspect
# writes them, slashes escaped.
assert_type(Pattern['^.+/x\.rules$'], 'x') |$e, $a| { notify { "1 e=${e} a=${a}": } }
assert_type(Stdlib::Absolutepath, 'x') |$e, $a| { notify { "2 e=${e} a=${a}": } }
assert_type(Integer, [1, 'a']) |$e, $a| { notify { "3 e=${e} a=${a}": } }
assert_type(String, 5) |$e, $a| { notify { "4 e=${e} a=${a}": } }
assert_type(String, { 'a' => 1 }) |$e, $a| { notify { "5 e=${e} a=${a}": } }
notify { "6 ${Optional[Stdlib::Unixpath]} ${Regexp['a/b']}": }
