# base64's strict decoding refuses a string that is not padded base64.
$x = base64('decode', 'YWJ', 'strict')
