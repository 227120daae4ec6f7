# ERB: `&:name` blocks (sysctl's reject(&:empty?)), and defined?(@x) is
# false for an undef variable (chrony's templates).
$value = '1  2'
$unset = undef
$set = 'yes'
notify { 'erb':
  message => inline_template("<%= String(@value).split(/[\\s\\t]/).reject(&:empty?).map(&:upcase).join('|') %> <%= defined?(@unset) ? 'u' : '-' %> <%= defined?(@set) ? 's' : '-' %>"),
}
