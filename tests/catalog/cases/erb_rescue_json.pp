# A template method with a `rescue` clause, JSON.parse and a %r{} regexp
# (collectd/curl_json.conf.erb), and begin/rescue/ensure.
$posts = ['{"a": [1, 2.5, null, true]}', 'not json', '{"q": "x\"y"}']
file { '/tmp/erb_rescue_json':
  content => inline_template(@(ERB)),
    <%-
      def valid_json?(json)
        JSON.parse(json)
        return true
      rescue JSON::ParserError
        return false
      end
    -%>
    <%- @posts.each do |p| -%>
    <%= valid_json?(p) %> <%= p.gsub(%r{"}, "'") %> <%= p =~ %r{^\{"[a-z]+"}i ? 'obj' : 'other' %>
    <%- end -%>
    <%= JSON.parse(@posts[0])['a'].inspect %>
    <%- out = [] -%>
    <%- begin -%>
    <%- out << 'body'; raise 'boom' -%>
    <%- rescue => e -%>
    <%- out << "rescued #{e}" -%>
    <%- ensure -%>
    <%- out << 'ensured' -%>
    <%- end -%>
    <%= out.join(', ') %>
    | ERB
}
