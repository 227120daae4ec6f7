# staging's scope_defaults: whether a resource default for a type's
# attribute is visible from the calling scope (the type name capitalized
# as Ruby's capitalize does), inherited from the scope that declared it.
define corpus_fn_probe {
  $path = scope_defaults('exec', 'path')
  $cwd = scope_defaults('EXEC', 'cwd')
  $file = scope_defaults('File', 'mode')
  notify { "probe ${title}": message => "${path} ${cwd} ${file}" }
}
class corpus_fn_outer {
  Exec { path => '/bin' }
  corpus_fn_probe { 'inside': }
}
include corpus_fn_outer
corpus_fn_probe { 'top': }
File { mode => '0644' }
corpus_fn_probe { 'after': }
$here = scope_defaults('File', 'mode')
notify { 'here': message => "${here}" }
