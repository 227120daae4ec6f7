# Ruby methods that change their receiver: `a << x`, push, concat, unshift,
# merge!, bang methods (nil when nothing changed); on a temporary they change
# a copy (apache's vhost/_scriptalias.erb: `aliases << {...} if @scriptalias`,
# `aliases.flatten.compact!`).
$scriptalias = '/usr/lib/cgi-bin'
$list = ['b', 'a', 'b']
file { '/tmp/erb_mutating_methods':
  content => inline_template(@(ERB)),
    <%- aliases = [] -%>
    <%- aliases << { 'alias' => '/cgi-bin', 'path' => @scriptalias } if @scriptalias -%>
    <%- aliases.flatten.compact! -%>
    <%= aliases.inspect %>
    <%- a = [3, nil, 1] -%>
    <%= a.compact!.inspect %> <%= a.compact!.inspect %> <%= a.inspect %>
    <%- a.push(5); a.unshift(0); a.concat([7, 8]) -%>
    <%= a.inspect %> <%= a.sort!.inspect %> <%= a.uniq!.inspect %>
    <%- h = { 'x' => 1 }; h.merge!({ 'y' => 2 }) -%>
    <%= h.inspect %>
    <%- s = 'ab'; s << 'c'; s.upcase! -%>
    <%= s %> <%= s.upcase!.inspect %>
    <%- l = @list.dup; l.uniq! -%>
    <%= l.inspect %> <%= @list.inspect %>
    | ERB
}
