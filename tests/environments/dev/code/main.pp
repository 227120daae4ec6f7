include greet
$dir = $facts['ferry_test_dir']
if $dir {
  file { "${dir}/dev.txt":
    ensure  => file,
    content => "environment=${environment}\n",
  }
}
