$text = @("END"/L)
  Hello ${name}
  | END
$raw = @(RAW)
no $interp here
- RAW
