function mymod::double(String $s) >> String {
  "${s}${s}"
}
