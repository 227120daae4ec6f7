# get_in_addr_arpa on a number: Ruby's NoMethodError.
$a = get_in_addr_arpa(10)
