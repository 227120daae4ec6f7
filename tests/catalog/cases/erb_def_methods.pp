# ERB templates that define methods (`def`, ssh's bool2str in
# sshd_config.erb), `return` from them, and Hash#delete/Array#delete/shift/
# pop, which change their receiver and return what they removed.
$options = { 'Port' => [22, 2222], 'PermitRootLogin' => false, 'UsePAM' => true, 'X' => '' }
file { '/tmp/erb_def_methods':
  content => inline_template(@(ERB)),
    <%-
      def bool2str(v)
        case v
        when true
          'yes'
        when false
          'no'
        else
          v
        end
      end
      def first_or_none(list, default)
        return default if list.empty?
        list.first
      end
    -%>
    <%- options = @options.dup -%>
    <%- if port = options.delete('Port') -%>
    <%- port.each do |p| -%>
    Port <%= p %>
    <%- end -%>
    <%- end -%>
    <%= options.delete('Nothing').inspect %>
    <%- options.sort.each do |k, v| -%>
    <%- if v != '' -%>
    <%= k %> <%= bool2str(v) %>
    <%- end -%>
    <%- end -%>
    <%= first_or_none([], 'none') %> <%= first_or_none(%w(a b), 'none') %>
    <%- a = [1, 2, 3, 2] -%>
    <%= a.delete(2) %> <%= a.delete(9).inspect %> <%= a.shift %> <%= a.pop %> <%= a.inspect %>
    <%= 'hello'.delete('l') %>
    | ERB
}
