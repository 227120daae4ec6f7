# A catalog statement outside an apply block is refused before anything runs.
plan pptest::resource() {
  run_command('true', 'localhost')
  if true {
    file { '/tmp/x': ensure => file }
  }
}
