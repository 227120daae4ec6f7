if $a == 1 and $b != 2 or !$c { notice("yes") }
$m = $s =~ /^a(b+)/
$n = $s !~ "x"
$i = "a" in ["a", "b"]
$t = $x < 1 or $x >= 10
