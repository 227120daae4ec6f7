# A list at the root is not an object: an error even with a default.
notify { 'x': message => String(parsehocon('[1, 2]', 'fallback')) }
