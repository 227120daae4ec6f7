include profile::web
profile::vhost { 'extra.example.com': port => 81 }
