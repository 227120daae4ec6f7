# scope.to_hash in a template (logrotate/etc/logrotate.d/rule.erb): the
# variables the scope sees, inner ones hiding outer ones, undef ones left out.
$top_only = 'top'
$shadowed = 'outer'
class corpus_erb_to_hash (
  $param = 'p',
  $missing = undef,
) {
  $shadowed = 'inner'
  $local = ['l']
  notify { 'to_hash':
    message => inline_template(@(ERB)),
      <%- h = scope.to_hash -%>
      <%= ['param', 'missing', 'shadowed', 'top_only', 'local', 'nope'].map { |k| "#{k}:#{h.has_key?(k)}:#{h[k].inspect}" }.join(' ') %>
      <%= scope.to_hash['local'].class %>
      | ERB
  }
}
include corpus_erb_to_hash
