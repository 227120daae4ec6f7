class needs (String $x) {}
include needs
