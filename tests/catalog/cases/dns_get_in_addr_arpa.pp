# dns's get_in_addr_arpa: the dotted parts reversed under in-addr.arpa
# (Ruby's split drops trailing empty parts).
['192.168.1.10', '10.0.0', 'a..b', '1.2.3.', '', 'single'].each |$i, $a| {
  notify { "arpa ${i}": message => get_in_addr_arpa($a) }
}
