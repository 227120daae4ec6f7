plan m(TargetSpec $targets) {
  apply_prep($targets)
  $report = apply($targets, '_catch_errors' => true) {
    file { '/tmp/x': ensure => file }
  }
  apply($targets) { }
}
