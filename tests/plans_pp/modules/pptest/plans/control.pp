# Control functions: nested plans, parallelize, background and wait,
# do_until, the file and system functions.
plan pptest::control(String $word = 'ok') {
  $inner = run_plan('pptest::values', { 'n' => 1, 'names' => [$word] })
  $caught = run_plan('pptest::failing', { '_catch_errors' => true })
  $par = parallelize([1, 2, 3]) |$i| { $i * 10 }
  $f = background('later') || { "done ${word}" }
  $waited = wait([$f])
  $count = ctrl::do_until({ 'limit' => 5 }) || { false }
  $kinds = catch_errors(['pptest/one']) || {
    fail_plan('first', 'pptest/one')
  }
  $quiet = without_default_logging() || { 'quiet' }
  out::message("message ${word}")
  return({
    'inner'    => $inner['doubled'],
    'caught'   => $caught.kind,
    'par'      => $par,
    'waited'   => $waited,
    'state'    => $f.state,
    'until'    => $count,
    'kinds'    => $kinds.message,
    'quiet'    => $quiet,
    'joined'   => file::join('a', 'b', 'c.txt'),
    'exists'   => file::exists('pptest/data.txt'),
    'missing'  => file::exists('pptest/none.txt'),
    'readable' => file::readable('pptest/data.txt'),
    'read'     => file::read('pptest/data.txt'),
    'env'      => system::env('PPTEST_UNSET_VARIABLE'),
  })
}
