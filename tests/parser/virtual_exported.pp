@user { 'deploy': uid => 1000 }
@@host { 'web': ip => '10.0.0.1' }
realize(User['deploy'])
