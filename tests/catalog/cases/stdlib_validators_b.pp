# stdlib's validate_domain_name, validate_email_address,
# validate_ip(v4|v6)_address, seeded_rand and to_bytes (issue 14).
validate_domain_name('example.com', 'www.foo-bar.example.org.', 'localhost', '.')
validate_email_address('bob@example.com', 'a.b+c-d@x1-y.org', 'x_y.z@mail.example.co')
validate_ipv4_address('1.2.3.4', '10.0.0.0/8', '192.168.1.0/255.255.255.0')
validate_ipv6_address('::1', 'fe80::1/64', '[2001:db8::1]', '::ffff:1.2.3.4')
validate_ip_address('1.2.3.4', '::', '2001:db8::/32')
notify { 'seeded_rand': message => String(seeded_rand(100, 'seed')) }
notify { 'seeded_rand-str': message => String(seeded_rand('1000000', 'another')) }
notify { 'seeded_rand-one': message => String(seeded_rand(1, 'x')) }
notify { 'to_bytes': message => String(to_bytes('4 kB')) }
notify { 'to_bytes-frac': message => String(to_bytes('1.5M')) }
notify { 'to_bytes-plain': message => String(to_bytes('100')) }
notify { 'to_bytes-exp': message => String(to_bytes('1e3k')) }
notify { 'to_bytes-num': message => String(to_bytes(2048)) }
notify { 'to_bytes-bytes': message => String(to_bytes('12 B')) }
notify { 'to_bytes-G': message => String(to_bytes('2G')) }
