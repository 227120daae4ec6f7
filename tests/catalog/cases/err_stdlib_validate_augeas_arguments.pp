# validate_augeas without a lens.
validate_augeas('x')
