# postgresql's Ruby functions, ported natively: the md5 password form and
# dollar quoting (with a tag when the text contains $$ or ends in $).
$pw = postgresql::postgresql_password('user1', 'secret')
$pw2 = postgresql_password('postgres', 12345)
$e1 = postgresql::postgresql_escape('plain text')
$e2 = postgresql::postgresql_escape('has $$ inside')
$e3 = postgresql::postgresql_escape('ends with $')
notify { 'pg': message => "${pw} ${pw2} ${e1} ${e2} ${e3}" }
