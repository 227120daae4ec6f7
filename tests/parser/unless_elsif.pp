unless $x { notice(1) } else { notice(2) }
if $a { 1 } elsif $b { 2 } else { 3 }
