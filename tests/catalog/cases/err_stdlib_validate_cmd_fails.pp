# validate_cmd whose checker refuses the content: its exit code and output in the message.
validate_cmd("hello\n", 'grep -c bye')
