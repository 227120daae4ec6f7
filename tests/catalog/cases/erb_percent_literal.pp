# ERB: Ruby's %(...) string literal with interpolation (systemd's limits.erb).
$limits = { 'LimitNOFILE' => 1024, 'X' => ['a', 'b'] }
notify { 'erb':
  message => inline_template("<% @limits.keys.sort.each do |k| -%><%= @limits[k].is_a?(Array) ? @limits[k].map { |x| %(#{k}=#{x}) }.join(',') : %(#{k}=#{@limits[k]}) %>;<% end -%>"),
}
