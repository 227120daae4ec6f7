plan other::catch_one() {
  return 3
}
