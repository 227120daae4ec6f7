$a = 'single $novar'
$b = "double ${x} and $y and ${facts["os"]["family"]}"
$c = "esc \t \n \\ \" \$"
