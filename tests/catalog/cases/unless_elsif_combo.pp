$n = 5
if $n < 3 { $r = 'small' } elsif $n < 10 { $r = 'medium' } else { $r = 'large' }
unless $n == 5 { $u = 'not five' } else { $u = 'five' }
$sel = $n ? { 1 => 'one', 5 => 'five', default => 'other' }
notify { 'combo': message => [$r, $u, $sel, $n in [1, 5], !($n > 4)] }
