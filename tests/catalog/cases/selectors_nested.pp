$size = 'large'
$mem = $size ? {
  'small' => 512,
  /^lar/  => $facts['memorysize_mb'] ? { undef => 0, default => 4096 },
  default => 1024,
}
notify { "mem ${mem}": }
