# stdlib's legacy validators that pass, bool2num, is_domain_name,
# shellquote and translate.
validate_string('a', undef, 'b')
validate_re('abc', ['^x', '^a'])
validate_integer(5, 10, 1)
validate_integer(['1', 2], 3)
validate_bool(true, false)
validate_array([])
validate_hash({})
$n = [bool2num(true), bool2num('no'), bool2num('yes')]
$d = [is_domain_name('example.com'), is_domain_name('-x.com'), is_domain_name('a.b1'), is_domain_name('.')]
$q = shellquote('plain', 'with space', 'dollar$x', "it's", ['a', 'b'])
$t = translate('Hello %{who}', { 'who' => 'world' })
notify { 'v': message => "${n} ${d} ${q} ${t}" }
