# Ruby's match globals in ERB: `=~` and `match` set $~ and $1..$n (nil after
# a miss), as apache's vhost/_directories.erb uses them
# (`if /^(.*)match$/ =~ provider` then `$1.capitalize + 'Match'`).
$providers = ['filesmatch', 'locationmatch', 'directory']
file { '/tmp/erb_match_globals':
  content => inline_template(@(ERB)),
    <%- @providers.each do |p| -%>
    <%- if /^(.*)match$/ =~ p -%>
    <%= $1.capitalize + 'Match' %> <%= $~[0] %>
    <%- else -%>
    <%= p %> <%= $1.inspect %>
    <%- end -%>
    <%- end -%>
    <%- if 'key=value'.match(/(\w+)=(\w+)/) -%>
    <%= $2 %>-<%= $1 %>
    <%- end -%>
    <%- 'abc' =~ /z/ -%>
    <%= $1.nil? %>
    | ERB
}
