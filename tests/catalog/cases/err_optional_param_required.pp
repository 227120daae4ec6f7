# An Optional parameter without a default is required too: Optional only
# lets undef be given.
class optional_needed (Optional[String] $maybe) {
  notify { "maybe ${maybe}": }
}
class { 'optional_needed': maybe => undef }
include optional_needed
class optional_missing (Optional[String] $maybe) {}
include optional_missing
