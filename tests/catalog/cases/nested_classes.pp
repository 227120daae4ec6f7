class outer_ns {
  class inner_ns { notify { "inner ${name} ${title} ${module_name}": } }
  include outer_ns::inner_ns
}
include outer_ns
class toplevel_explicit { notify { "explicit": } }
include toplevel_explicit
