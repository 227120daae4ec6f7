# scope.setvar and changing the hash a scope variable holds
# (`scope.lookupvar('_template_scope')[:item] = x`, apache's
# vhost/_directories.erb), seen by a template rendered from it; Enumerator
# chains without a block (`map.each_with_index`, `each_with_index.map`, zookeeper's zoo.cfg.erb).
class setvar {
  $servers = ['a', 'b', 'c']
  file { '/tmp/erb_scope_setvar':
    content => inline_template(@(ERB)),
      <%- scope.setvar('_template_scope', {}) -%>
      <%- ['one', 'two'].each do |d| -%>
      <%- scope.lookupvar('_template_scope')[:item] = d -%>
      <%= scope.function_inline_template(['item=<' + "%= scope.lookupvar('_template_scope')[:item] %" + '>']) %>
      <%- end -%>
      <%- _servers = {} -%>
      <%- scope.lookupvar('setvar::servers').map.each_with_index { |e, i| _servers[i + 1] = e } -%>
      <%= _servers.inspect %>
      <%= @servers.each_with_index.map { |e, i| "#{i}:#{e}" }.join(',') %>
      <%= @_template_scope.inspect %>
      | ERB
  }
}
include setvar
