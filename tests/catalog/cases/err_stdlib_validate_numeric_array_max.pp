# validate_numeric with an array maximum: Ruby's to_s of it in the message.
validate_numeric(1, ['a'])
