# stdlib's convert_base reads strings as base-10 digits only.
notice(convert_base('0x1f', 2))
