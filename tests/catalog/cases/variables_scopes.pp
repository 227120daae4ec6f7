$top = 'top'
class scoped {
  $local = "in class, top=${top}"
  notify { 'scoped': message => $local }
}
include scoped
notify { 'qualified': message => $scoped::local }
notify { 'facts': message => "${facts['os']['family']} ${::osfamily} ${osfamily}" }
