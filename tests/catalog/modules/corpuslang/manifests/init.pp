# Puppet instantiates init.pp whenever it looks for any class of the module:
# the unknown type below fails `include corpuslang::other` too.
class corpuslang (
  Optional[Corpuslang::Nosuchtype] $x = undef,
) {
}
