define app::site (Optional[Integer[1, 65535]] $port = undef, *$rest) {
  notice($title)
}
