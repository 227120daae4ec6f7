class tagged_class {
  tag 'extra'
  notify { 'inside': }
  notify { 'check': message => [tagged('tagged_class'), tagged('extra'), tagged('nope')] }
}
include tagged_class
notify { 'Upper Title': tag => ['Foo', 'bar::baz'] }
