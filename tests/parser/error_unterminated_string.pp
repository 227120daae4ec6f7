$s = "unterminated
