# mongodb_password takes exactly two arguments.
$p = mongodb_password('admin')
