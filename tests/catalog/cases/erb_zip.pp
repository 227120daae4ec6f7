# Array#zip in a template (haproxy/haproxy_mailer.erb), with a shorter and
# a longer partner array and with a block.
$ips = ['192.0.2.1', '192.0.2.2', '192.0.2.3']
$names = ['a', 'b']
notify { 'zip':
  message => inline_template('<% Array(@ips).zip(Array(@names)).each do |ip, n| -%><%= n.inspect %>=<%= ip %>;<% end -%>'),
}
notify { 'zip-longer':
  message => inline_template('<%= @names.zip(@ips, [1]).inspect %>'),
}
notify { 'zip-block':
  message => inline_template('<% r = [] %><% @names.zip(@ips) { |n, ip| r << n + ip } %><%= r.join(",") %>'),
}
