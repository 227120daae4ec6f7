# An output tag whose code starts on the next line, and String#gsub with a
# block (swift::proxy and swift::storage::server build class names so).
$pipeline = ['catch-errors', 'proxy-logging', 'proxy-server']
$classes = inline_template(
  "<%=
      (@pipeline - ['proxy-server']).collect do |x|
        'swift::proxy::' + x.gsub(/-/){ %q(_) }
      end.join(',')
  %>")
notify { 'classes': message => $classes }
notify { 'sub-block':
  message => inline_template('<%= "a-b-c".sub(/-(.)/) { |m| m.upcase } %> <%= "x1y22".gsub(/[0-9]+/) { |d| (d.to_i * 2).to_s } %>'),
}
