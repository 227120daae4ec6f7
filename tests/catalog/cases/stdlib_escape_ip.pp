# stdlib's escaping, base conversion, address predicates and type test
# (issue 14): batch_escape, powershell_escape, convert_base,
# is_mac_address, is_email_address, is_ipv4_address, is_ipv6_address,
# enclose_ipv6 (Ruby's IPAddr), is_a and os_version_gte.
notify { 'batch_escape': message => [batch_escape('a "b" $c \\d'), batch_escape(''), batch_escape(42)] }
notify { 'powershell_escape': message => [powershell_escape("a b'c`d|e\nf\$g\"h"), powershell_escape(7)] }
notify { 'convert_base': message => [convert_base(5, 2), convert_base('254', '16'), convert_base(35, 36), convert_base(0, 8), convert_base(-10, 2)] }
notify { 'is_mac_address': message => [is_mac_address('00:a0:1f:12:7f:a0'), is_mac_address('0:A:1f:2:7F:a0'), is_mac_address('00:a0:1f:12:7f'), is_mac_address('00-a0-1f-12-7f-a0'), is_mac_address('00:a0:1f:12:7f:g0'), is_mac_address('')] }
notify { 'is_email_address': message => [is_email_address('bob@example.com'), is_email_address('a.b+c@mail.example.org'), is_email_address('bob@Example.com'), is_email_address('bob'), is_email_address('@x.com'), is_email_address(3)] }
notify { 'is_ipv4_address': message => [is_ipv4_address('1.2.3.4'), is_ipv4_address('10.0.0.0/8'), is_ipv4_address('1.2.3'), is_ipv4_address('256.1.1.1'), is_ipv4_address('::1'), is_ipv4_address(''), is_ipv4_address(undef), is_ipv4_address(1)] }
notify { 'is_ipv6_address': message => [is_ipv6_address('::1'), is_ipv6_address('fe80::1/64'), is_ipv6_address('2001:db8::g'), is_ipv6_address('1.2.3.4'), is_ipv6_address('')] }
notify { 'enclose_ipv6': message => [enclose_ipv6('::1'), enclose_ipv6(['1.2.3.4', '*', 'fe80::1', '2001:DB8::1', '2001:db8::1']), enclose_ipv6('fe80::1/64'), enclose_ipv6('10.1.2.3/8'), enclose_ipv6([])] }
notify { 'is_a': message => [is_a(1, Integer), is_a('x', Integer), is_a([1], Array[Integer]), is_a(undef, Optional[String]), is_a('ab', Pattern[/^a/])] }
notify { 'os_version_gte': message => [os_version_gte('Debian', '9'), os_version_gte('Debian', '99'), os_version_gte('RedHat', '1')] }
