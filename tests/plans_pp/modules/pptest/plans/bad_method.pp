plan pptest::bad_method() {
  $e = catch_errors() || { fail_plan('x') }
  $e.message.nosuchfunction()
}
