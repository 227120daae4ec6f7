# validate_integer with a maximum that is not a number: Ruby prints it after to_s, so its class is String.
validate_integer(1, true)
