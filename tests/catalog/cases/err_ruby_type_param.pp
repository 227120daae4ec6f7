# A module's Ruby type has only the attributes it declares (redis's sysctl).
corpuslang_knob { 'k': ensure => present, setting => 'a', value => 'b' }
