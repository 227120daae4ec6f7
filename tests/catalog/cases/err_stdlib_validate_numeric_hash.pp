# validate_numeric of a hash (Ruby's message names validate_integer).
validate_numeric({ 'a' => 1 })
