# Comparing undef: Puppet labels it "Undef Value" and gives the cause
# (monit::params compares the unset $::lsbmajdistrelease on RedHat).
if $facts['nosuchfact'] < 7 {
  notify { 'less': }
}
