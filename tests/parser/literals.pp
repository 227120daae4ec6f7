$n = [0x1F, 017, 1.5e3, -7, 3.25]
$t = [true, false, undef, default]
$h = { "a" => 1, b => [2, 3] }
