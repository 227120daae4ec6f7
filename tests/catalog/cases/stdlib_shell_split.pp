# stdlib's shell_split: Ruby's Shellwords.shellsplit.
$cases = [
  'a b  c',
  "  lead and trail  ",
  "one 'two three' \"four \\\"five\\\" \\\$six \\q\"",
  'x\ y z\\',
  "glued'single'\"double\" next",
  '',
  "tab\there",
]
$cases.each |$i, $c| {
  notify { "split ${i}": message => String(shell_split($c)) }
}
