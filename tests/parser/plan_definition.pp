plan mymod::deploy(TargetSpec $targets, String[1] $version = '1.0', Optional[Integer] $retries = undef) {
  $r = run_task('mymod::install', $targets, 'version' => $version, '_catch_errors' => true)
  return $r
}
