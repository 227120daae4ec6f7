plan pptest::noop() {
}
