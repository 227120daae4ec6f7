# validate_cmd with a checker that does not exist.
validate_cmd('x', '/nonexistent/checker --flag')
