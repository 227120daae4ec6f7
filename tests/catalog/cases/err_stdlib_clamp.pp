# stdlib's clamp takes strings only when they are all digits.
notice(clamp('1.5', 2, 3))
