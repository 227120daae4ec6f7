# A Ruby error while a template file runs: Puppet's "Failed to parse
# template" with the file, the template line and Ruby's message (ssh's
# sshd_match_block.erb with a string where it wants a hash).
class erbline($flag = true, $opts = 'x') {
  file { '/tmp/err_erb_runtime_line':
    content => template('mymod/error_line.erb'),
  }
}
include erbline
