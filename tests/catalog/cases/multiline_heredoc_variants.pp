$a = @(EOT/n)
  line one\nline two
  |-EOT
$b = @("EOT"/$)
  cost: \$5 and ${facts['hostname']}
  EOT
$c = @(EOT:json)
  {"k": "v"}
  | EOT
notify { 'hd': message => [$a, $b, $c] }
