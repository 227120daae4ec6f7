# validate_absolute_path refuses a relative path with Ruby's inspect of it
# (monit::check::directory's path).
validate_absolute_path(['/ok', 'relative/path'])
