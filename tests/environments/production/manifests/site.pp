# The file resource is written where the agent's fact ferry_test_dir says
# (the test sets FACTER_ferry_test_dir), naming what the catalog saw.
include greet
$dir = $facts['ferry_test_dir']
if $dir {
  file { "${dir}/production.txt":
    ensure  => file,
    content => "environment=${environment} plugin_fact=${facts['ferry_plugin_fact']} certname=${trusted['certname']}\n",
  }
}
