$port = 80
$names = ['a', 'b']
$e = inline_epp('port=<%= $port %><% $names.each |$n| { %> <%= $n %><% } %>')
$p = inline_epp('<%- | $x, $y = 2 | -%>x=<%= $x %> y=<%= $y %>', { 'x' => 1 })
$r = inline_template('<%= @port %>/<%= @names.join(",") %>')
notify { 'tpl': message => [$e, $p, $r] }
