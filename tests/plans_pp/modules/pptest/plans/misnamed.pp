plan pptest::other_name() {
}
