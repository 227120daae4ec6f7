# concat (puppetlabs-concat): files assembled from fragments. numeric.txt
# orders its fragments numerically (9 before 10 before 100), alpha.txt as
# strings ('10' before '9', ties by fragment name) and takes one fragment
# from a module's file; ensure_newline ends every fragment with a newline;
# warn adds the default header, or a custom one. The prestate exec makes
# changed.conf (old content, mode 0600), kept.conf (replace => false) and
# gone.conf (ensure => absent).
$root = '/tmp/ferry-puppet-case'

# concat::fragment compares $clientversion, which `puppet catalog compile`
# with yaml facts does not set.
$clientversion = '7.23.0'

exec { 'prestate':
  command => "/bin/sh -c 'cd ${root} && printf \"old\\n\" > changed.conf && chmod 0600 changed.conf && printf \"mine\\n\" > kept.conf && printf \"bye\\n\" > gone.conf && touch .prestate'",
  creates => "${root}/.prestate",
}

concat { "${root}/numeric.txt":
  order          => 'numeric',
  ensure_newline => true,
  mode           => '0640',
  warn           => true,
}

concat::fragment { 'ten':
  target  => "${root}/numeric.txt",
  content => 'ten',
  order   => 10,
}

concat::fragment { 'nine':
  target  => "${root}/numeric.txt",
  content => "nine\n",
  order   => '9',
}

concat::fragment { 'hundred':
  target  => "${root}/numeric.txt",
  content => 'hundred',
  order   => 100,
}

concat::fragment { 'also-ten':
  target  => "${root}/numeric.txt",
  content => 'also ten',
  order   => '10',
}

concat { "${root}/alpha.txt":
  owner => 'daemon',
  group => 'root',
}

concat::fragment { 'alpha-9':
  target  => "${root}/alpha.txt",
  content => "nine\n",
  order   => '9',
}

concat::fragment { 'alpha-10':
  target  => "${root}/alpha.txt",
  content => "ten\n",
  order   => '10',
}

concat::fragment { 'alpha-b':
  target  => "${root}/alpha.txt",
  content => "b\n",
  order   => 'b',
}

concat::fragment { 'alpha-a':
  target  => "${root}/alpha.txt",
  source  => 'puppet:///modules/ferry_files/fragment.txt',
  order   => 'b',
}

concat::fragment { 'alpha-no-newline':
  target  => "${root}/alpha.txt",
  content => 'no newline',
  order   => 'c',
}

concat { "${root}/changed.conf":
  warn    => "# custom header\n",
  require => Exec['prestate'],
}

concat::fragment { 'changed-body':
  target  => "${root}/changed.conf",
  content => "key = value\n",
}

concat { "${root}/kept.conf":
  replace => false,
  mode    => '0600',
  require => Exec['prestate'],
}

concat::fragment { 'kept-body':
  target  => "${root}/kept.conf",
  content => "would replace\n",
}

concat { "${root}/gone.conf":
  ensure  => absent,
  require => Exec['prestate'],
}
