plan pptest::failing() {
  fail_plan('the inner plan failed', 'pptest/inner', { 'n' => 1 })
}
