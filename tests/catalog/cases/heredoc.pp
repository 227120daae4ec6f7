$who = 'world'
$text = @("END"/L)
  Hello ${name}
  second \
  line
  | END
$raw = @(RAW)
    keep $who
      indented
    -RAW
notify { 'h1': message => $text }
notify { 'h2': message => $raw }
