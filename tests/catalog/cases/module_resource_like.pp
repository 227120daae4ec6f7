class { 'mymod': greeting => 'yo', mode => 'slow', settings => { 'a' => 'b' } }
