file { '/g': }
notify { 'gen': require => Resource['file', '/g'], message => [Resource['file', '/g'], File['/g'] == Resource['File', '/g']] }
