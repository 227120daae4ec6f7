# An override of a defined type's instance is merged at once, so the
# instance's body sees it (haproxy's Concat[...] { validate_cmd => ... }).
define wrapper(Optional[String] $cmd = undef) {
  notify { "cmd ${title}": message => "cmd=${cmd}" }
}
wrapper { 'w': }
Wrapper['w'] { cmd => 'validate %' }
