# An unmatched quote is Ruby's ArgumentError.
$words = shell_split("a 'b c")
