# stdlib's to_bytes: a leading space leaves the number out, so its first
# digit is taken for a prefix.
notify { 'x': message => String(to_bytes(' 4k')) }
