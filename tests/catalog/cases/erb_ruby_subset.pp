# ERB templates are Ruby: this exercises the subset ferry interprets.
$list = ['b', 'a', 'C', 'a']
$h = { 'port' => 80, 'name' => 'web', 'opts' => { 'x' => true, 'y' => '' } }
$n = 7
$f = 2.5
$empty = ''
$nothing = undef
file { '/tmp/erb1':
  content => inline_template(@(ERB)),
    list=<%= @list %> sorted=<%= @list.sort.join(',') %> uniq=<%= @list.uniq.size %>
    hash=<%= @h %>
    <% @h.sort.each do |k, v| -%>
    <%= k %>: <%= v.is_a?(Hash) ? v.keys.join('+') : v %>
    <% end -%>
    <%- @list.each_with_index do |item, i| -%>
    [<%= i %>]=<%= item.upcase %><% if i < @list.length - 1 %>,<% end %>
    <%- end -%>
    math=<%= @n / 2 %> <%= -7 / 2 %> <%= @n % 3 %> <%= @f * 2 %> <%= @n.to_s + 'x' %>
    nil=<%= @nothing.nil? %> <%= @nothing.to_s.empty? %> <%= @empty.empty? %> <%= [nil, 1].compact.length %>
    cmp=<%= 'a' == 'A' %> <%= 'abc' =~ /b/ %> <%= (@n > 3 && @f < 3) %> <%= !@nothing %>
    str=<%= "port #{@h['port']}!" %> <%= 'a-b-c'.split('-').reverse.join %> <%= 'Hello'.gsub(/l/, 'L') %> <%= '  x '.strip %>
    words=<%= %w(x y z).map { |w| w * 2 }.join(' ') %> sel=<%= [1, 2, 3, 4].select { |x| x.even? }.inspect %>
    fn=<%= scope.function_upcase(['abc']) %> <%= scope.call_function('join', [['p', 'q'], '/']) %> <%= scope['n'] %> <%= scope.lookupvar('::n') %>
    case=<% case @h['name'] when 'db' then %>db<% when /^w/ then %>w-match<% else %>other<% end %>
    arr=<%= Array(@nothing).inspect %> <%= Array('s').inspect %> <%= [[1, [2]], 3].flatten.inspect %> <%= {'a' => nil}.inspect %>
    <% x = 0 -%>
    <% [1, 2, 3].each do |i| next if i == 2; x += i end -%>
    sum=<%= x %> fl=<%= 10.0 / 4 %> <%= 1e20.to_s %> <%= @h.fetch('missing', 'dflt') %> <%= @h.key?('port') %>
    | ERB
}
